import { tr } from './i18n'

/** How long a Copy button says what happened before it reads "Copy" again. */
export const COPY_FEEDBACK_MS = 1_500

/** Puts `text` on the clipboard; false when it could not (no permission, no clipboard). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    return false
  }
}

/** How a copy went, in the words a Copy button shows for a moment: "Copied" or "Could not copy". */
export function copyOutcome(copied: boolean): string {
  return copied ? tr('copy.copied') : tr('copy.failed')
}
