/**
 * The SCIM filters identity providers send when they look a person or a group up before
 * provisioning it: `userName eq "ann@example.com"`, `externalId eq "…"`, `displayName eq "Sales"`,
 * `id eq "…" and members[value eq "…"]` (Entra's membership check). Equality joined by `and`, which
 * is all they send; anything else is refused with `invalidFilter` saying what is supported.
 *
 * Read by a single pass over at most 1,000 characters (no regular expression runs over it), into
 * at most ten comparisons.
 */
import { ScimError } from './scim-protocol'

/** One `attribute eq value` of a filter; `path` lower-cased, `members[value eq x]` as `members.value`. */
export interface ScimComparison {
  path: string
  value: string | number | boolean | null
}

const MAX_FILTER_CHARS = 1_000
const MAX_COMPARISONS = 10

const invalid = (message: string) => new ScimError(400, `${message} Filters of the form attribute eq "value", joined by and, are supported.`, 'invalidFilter')

const isNameCharacter = (character: string) => /[\w.:$-]/.test(character)

class FilterReader {
  private at = 0
  constructor(private readonly text: string) {}

  done(): boolean {
    this.spaces()
    return this.at >= this.text.length
  }

  spaces(): void {
    while (this.text[this.at] === ' ') this.at++
  }

  /** An attribute path: letters, digits, `.`, `:`, `_`, `-`, `$` (a schema URN prefix included). */
  name(): string {
    this.spaces()
    const start = this.at
    while (this.at < this.text.length && isNameCharacter(this.text[this.at]!)) this.at++
    if (this.at === start) throw invalid(`An attribute name was expected at character ${start + 1}.`)
    return this.text.slice(start, this.at)
  }

  take(literal: string): boolean {
    this.spaces()
    if (this.text.slice(this.at, this.at + literal.length).toLowerCase() !== literal) return false
    const next = this.text[this.at + literal.length]
    // A word ends where a name would not go on.
    if (/\w/.test(literal) && next !== undefined && isNameCharacter(next)) return false
    this.at += literal.length
    return true
  }

  expect(literal: string): void {
    if (!this.take(literal)) throw invalid(`"${literal}" was expected at character ${this.at + 1}.`)
  }

  /** A JSON string, number, true, false or null. */
  value(): ScimComparison['value'] {
    this.spaces()
    if (this.text[this.at] === '"') return this.quoted()
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) if (this.take(word)) return value
    const start = this.at
    while (this.at < this.text.length && /[\d.eE+-]/.test(this.text[this.at]!)) this.at++
    const number = Number(this.text.slice(start, this.at))
    if (this.at === start || !Number.isFinite(number)) throw invalid(`A quoted value was expected at character ${start + 1}.`)
    return number
  }

  private quoted(): string {
    const start = this.at
    this.at++
    let escaped = false
    while (this.at < this.text.length) {
      const character = this.text[this.at++]
      if (escaped) escaped = false
      else if (character === '\\') escaped = true
      else if (character === '"') {
        try {
          return JSON.parse(this.text.slice(start, this.at)) as string
        } catch {
          throw invalid(`The value at character ${start + 1} is not a valid string.`)
        }
      }
    }
    throw invalid(`The value at character ${start + 1} has no closing quote.`)
  }
}

/** The attribute a path names, without a core schema's URN: `urn:…:User:userName` → `username`. */
export function attributeOf(path: string): string {
  const lower = path.toLowerCase()
  const core = /^urn:ietf:params:scim:schemas:core:2\.0:(?:user|group):/
  return core.test(lower) ? lower.replace(core, '') : lower
}

/** The comparisons of `filter`, all of which a resource must meet. */
export function parseScimFilter(filter: string): ScimComparison[] {
  if (filter.length > MAX_FILTER_CHARS) throw invalid(`The filter has ${filter.length} characters; at most ${MAX_FILTER_CHARS} are read.`)
  const reader = new FilterReader(filter)
  const comparisons: ScimComparison[] = []
  for (;;) {
    if (comparisons.length >= MAX_COMPARISONS) throw invalid(`At most ${MAX_COMPARISONS} comparisons are read.`)
    const name = attributeOf(reader.name())
    if (reader.take('[')) {
      const inner = attributeOf(reader.name())
      reader.expect('eq')
      const value = reader.value()
      reader.expect(']')
      comparisons.push({ path: `${name}.${inner}`, value })
    } else {
      if (!reader.take('eq')) throw invalid(`Only "eq" is supported after ${name}.`)
      comparisons.push({ path: name, value: reader.value() })
    }
    if (reader.done()) return comparisons
    if (!reader.take('and')) throw invalid('Only "and" may join comparisons.')
  }
}
