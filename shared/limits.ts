/** Limits the server enforces and the app shows (input sizes a person can see in a form). */

/** Longest thread title kept. */
export const MAX_THREAD_TITLE = 120

/** Largest workflow definition body accepted (a saved workflow is at most this big). */
export const MAX_WORKFLOW_BODY_BYTES = 256 * 1024

/** Longest note a person may give a saved workflow version ("what changed"). */
export const MAX_WORKFLOW_VERSION_NOTE_CHARS = 200
