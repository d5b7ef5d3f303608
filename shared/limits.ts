/** Limits the server enforces and the app shows (input sizes a person can see in a form). */

/** Longest thread title kept. */
export const MAX_THREAD_TITLE = 120
