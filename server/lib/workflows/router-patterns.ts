/**
 * A router's `matches` conditions come from users, and the input they are matched against from
 * models, so they run on a linear-time engine (re2js, a pure-JavaScript port of RE2): no pattern
 * can make a match take longer than a pass over the text. RE2 leaves out the features that need
 * backtracking (back-references, look-arounds); such patterns are refused when a workflow is saved.
 */
import { RE2JS } from 're2js'

/** Characters of the input a pattern looks at (the start of it): bounds each match to a few ms. */
export const MAX_PATTERN_INPUT_CHARS = 20_000

/** A compiled router pattern, or why it cannot be one. */
export type RouterPattern = { ok: true, test: (input: string) => boolean } | { ok: false, error: string }

/** Compiles `source` (case-insensitive, as routers match). */
export function compileRouterPattern(source: string): RouterPattern {
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE)
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : 'not a valid pattern'
    return { ok: false, error: reason }
  }
  return { ok: true, test: input => compiled.matcher(input.slice(0, MAX_PATTERN_INPUT_CHARS)).find() }
}
