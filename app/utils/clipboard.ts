/** How long a Copy button says what happened before it reads "Copy" again. */
export const COPY_FEEDBACK_MS = 1_500

/**
 * Puts `text` on the clipboard and says how it went, in the words a Copy button shows: "Copied",
 * or "Could not copy" (no permission, no clipboard).
 */
export async function copyText(text: string): Promise<'Copied' | 'Could not copy'> {
  try {
    await navigator.clipboard.writeText(text)
    return 'Copied'
  } catch {
    return 'Could not copy'
  }
}
