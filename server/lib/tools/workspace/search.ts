/**
 * Finding files and lines in a workspace with patterns a model or a person wrote: globs become
 * RE2 expressions and grep patterns are RE2 (the `re2js` port of Google's RE2), which run in time
 * linear in the text whatever the pattern, so no pattern can stall the server the way a
 * backtracking regular expression can.
 */
import { RE2JS } from 're2js'
import { RefusalError } from '../../domain-error'

export const MAX_PATTERN_CHARS = 500

/** A glob (`*.md`, `src/**\/*.ts`, `notes/{a,b}.txt`, `file?.js`) as an RE2 expression for whole paths. */
export function globExpression(glob: string): string {
  let out = ''
  let braces = 0
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!
    if (char === '*') {
      if (glob[index + 1] === '*') {
        // `**/` matches no folder or any run of them; a trailing `**` anything below.
        if (glob[index + 2] === '/') {
          out += '(?:.*/)?'
          index += 2
        } else {
          out += '.*'
          index += 1
        }
      } else {
        out += '[^/]*'
      }
    } else if (char === '?') {
      out += '[^/]'
    } else if (char === '{') {
      braces++
      out += '(?:'
    } else if (char === '}' && braces > 0) {
      braces--
      out += ')'
    } else if (char === ',' && braces > 0) {
      out += '|'
    } else {
      out += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')
    }
  }
  if (braces > 0) throw new RefusalError(`The glob "${glob.slice(0, 80)}" opens a { it never closes.`, 400)
  return `^${out}$`
}

/** A compiled glob matching whole workspace paths; a glob without `/` matches a file name in any folder. */
export function compileGlob(glob: string): (path: string) => boolean {
  if (glob.length > MAX_PATTERN_CHARS) throw new RefusalError(`The glob is longer than ${MAX_PATTERN_CHARS} characters.`, 400)
  const trimmed = glob.trim().replace(/^\.?\//, '')
  const expression = RE2JS.compile(globExpression(trimmed.includes('/') ? trimmed : `**/${trimmed}`))
  return path => expression.matches(path)
}

/** A grep pattern: RE2 syntax, or the text itself with `literal`. */
export function compilePattern(pattern: string, options: { ignoreCase?: boolean, literal?: boolean }): RE2JS {
  if (pattern.length === 0) throw new RefusalError('The pattern is empty.', 400)
  if (pattern.length > MAX_PATTERN_CHARS) throw new RefusalError(`The pattern is longer than ${MAX_PATTERN_CHARS} characters.`, 400)
  try {
    return RE2JS.compile(options.literal ? RE2JS.quote(pattern) : pattern, options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0)
  } catch (error) {
    throw new RefusalError(`The pattern "${pattern.slice(0, 80)}" is not a regular expression RE2 accepts (${(error as Error).message}); lookarounds and backreferences are not supported. Pass literal: true to search for the text as it is.`, 400)
  }
}
