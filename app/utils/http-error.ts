/** The server's message from a failed `$fetch` (its statusMessage says what to fix). */
export function errorMessage(error: unknown, fallback = 'Something went wrong; try again.'): string {
  const data = (error as { data?: { message?: string, statusMessage?: string } })?.data
  return data?.message ?? data?.statusMessage ?? (error instanceof Error ? error.message : fallback)
}
