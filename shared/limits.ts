/** Limits the server enforces and the app shows (input sizes a person can see in a form). */

/** Longest thread title kept. */
export const MAX_THREAD_TITLE = 120

/** Largest workflow definition body accepted (a saved workflow is at most this big). */
export const MAX_WORKFLOW_BODY_BYTES = 256 * 1024

/** Longest note a person may give a saved workflow version ("what changed"). */
export const MAX_WORKFLOW_VERSION_NOTE_CHARS = 200

/** Longest words of a model's shown with a question to approve (a tool's description); the rest is cut. */
export const MAX_MODEL_WORDS = 300

/** The most models that answer one question side by side (the first included): `compareWith` names the others. */
export const MAX_SIDE_BY_SIDE = 4
