/**
 * Settings that moved: an operator who still sets an old name is told at start-up what it became,
 * rather than having it ignored without a word.
 */

/** Each old variable, and what to set instead. */
const MOVED: Record<string, string> = {
  NUXT_KNOWLEDGE_DOCUMENTS_PER_PERSON: 'NUXT_LIMITS_ROLES_<ROLE>_KNOWLEDGE_DOCUMENTS (per role, and per group on Admin → Groups)',
  NUXT_KNOWLEDGE_BYTES_PER_PERSON: 'NUXT_LIMITS_ROLES_<ROLE>_KNOWLEDGE_MEGABYTES (in MiB, per role, and per group on Admin → Groups)',
}

/** A line per moved variable set in `env`, saying what to set instead. */
export function movedSettings(env: Record<string, string | undefined>): string[] {
  return Object.entries(MOVED).filter(([name]) => env[name] !== undefined).map(([name, instead]) => `- ${name} is no longer read: set ${instead}.`)
}
