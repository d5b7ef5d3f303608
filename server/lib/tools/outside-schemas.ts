/**
 * JSON Schemas that come from outside the server (a browser tool's declaration from the app, an MCP
 * server's elicitation form) and the answers checked against them. Such a schema is bounded before
 * it is compiled: its size and depth, and no `pattern` / `patternProperties` (a regular expression
 * from outside, run on an answer from outside, could backtrack for minutes on the event loop) and
 * no `$ref` (nothing is fetched). Compiled validators are kept in a small LRU by schema text.
 */
import Ajv, { type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { LRUCache } from 'lru-cache'

/** Largest schema accepted, as JSON. */
export const MAX_SCHEMA_BYTES = 16 * 1024
/** Deepest nesting of a schema. */
export const MAX_SCHEMA_DEPTH = 10
const FORBIDDEN_KEYWORDS = new Set(['pattern', 'patternProperties', '$ref', '$dynamicRef', '$recursiveRef', '$id'])

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: false })
addFormats(ajv)
const validators = new LRUCache<string, ValidateFunction>({ max: 200 })

/** Why `schema` cannot be used (as a sentence naming the problem), or undefined when it can. */
export function answerSchemaProblem(schema: unknown, what: string): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${what} must be a JSON Schema object`
  const text = JSON.stringify(schema)
  if (text.length > MAX_SCHEMA_BYTES) return `${what} is ${text.length} bytes; at most ${MAX_SCHEMA_BYTES} are accepted`
  const problem = walk(schema, 0)
  if (problem) return `${what} ${problem}`
  try {
    compiled(text)
  } catch (error) {
    return `${what} is not a valid JSON Schema: ${(error as Error).message}`
  }
  return undefined
}

function walk(node: unknown, depth: number): string | undefined {
  if (depth > MAX_SCHEMA_DEPTH) return `nests deeper than ${MAX_SCHEMA_DEPTH} levels`
  if (Array.isArray(node)) {
    for (const item of node) {
      const problem = walk(item, depth + 1)
      if (problem) return problem
    }
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (FORBIDDEN_KEYWORDS.has(key)) return `uses "${key}", which is not accepted here (use enum, minLength/maxLength or format instead of patterns; inline instead of $ref)`
      const problem = walk(value, depth + 1)
      if (problem) return problem
    }
  }
  return undefined
}

function compiled(text: string): ValidateFunction {
  let validate = validators.get(text)
  if (!validate) {
    validate = ajv.compile(JSON.parse(text) as object)
    validators.set(text, validate)
  }
  return validate
}

/**
 * Checks `value` against a schema that passed `answerSchemaProblem` (its defaults are filled in
 * place); the first problem as a sentence, or undefined when it fits.
 */
export function answerMismatch(schema: Record<string, unknown>, value: unknown): string | undefined {
  const validate = compiled(JSON.stringify(schema))
  if (validate(value)) return undefined
  const [error] = validate.errors ?? []
  if (!error) return 'does not match what was asked'
  const where = error.instancePath ? `"${error.instancePath.slice(1).replaceAll('/', '.')}"` : 'the answer'
  return `${where} ${error.message ?? 'does not match what was asked'}`
}
