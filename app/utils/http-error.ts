import { tr } from './i18n'

/** What to say when a request got no answer at all (offline, or the server is down). */
export function unreachableMessage(): string {
  return typeof navigator !== 'undefined' && navigator.onLine === false
    ? tr('errors.offline')
    : tr('errors.unreachable')
}

/**
 * The server's message from a failed `$fetch` (its statusMessage says what to fix), or, when no
 * answer came at all, a sentence that says so instead of `[POST] "/api/…": <no response> Failed to fetch`.
 */
export function errorMessage(error: unknown, fallback = tr('errors.generic')): string {
  const failed = error as { data?: { message?: string, statusMessage?: string }, statusCode?: number, response?: unknown } | null
  const data = failed?.data
  if (data?.message ?? data?.statusMessage) return (data.message ?? data.statusMessage)!
  if (failed && failed.statusCode === undefined && failed.response === undefined && error instanceof Error && /no response|failed to fetch|networkerror|load failed/i.test(error.message)) return unreachableMessage()
  return error instanceof Error ? error.message : fallback
}

/** The HTTP status of a failed `$fetch` (undefined when no answer came). */
export function errorStatus(error: unknown): number | undefined {
  const failed = error as { statusCode?: number, status?: number } | null
  return failed?.statusCode ?? failed?.status
}
