/**
 * JSON Schemas that come from outside the server (a browser tool's declaration from the app, an MCP
 * server's elicitation form) and the answers checked against them. Such a schema is bounded before
 * anything is done with it: its size, depth and number of subschemas, and no `pattern` /
 * `patternProperties` (a regular expression from outside, run on an answer from outside, could
 * backtrack for minutes on the event loop), `uniqueItems` only over items of a declared scalar
 * type (ajv checks those with a map; any others it compares pair by pair: 6,500 small objects
 * held the event loop 7 s) and no `$ref` (nothing is fetched). Answers are
 * bounded too (`answerShapeProblem`): how many values and how deep, before any schema sees them,
 * so checking one costs time in proportion to its size.
 *
 * Checking that a schema is valid reads it as data against the meta-schema (compiled once), so a
 * request that declares schemas costs time in proportion to their size, never a compilation.
 * Compiling (ajv generates code: ~1 ms per subschema) happens only when an answer is checked
 * against the schema, at most once per distinct schema while it is in a small LRU keyed by the
 * schema's digest; a schema leaving the LRU leaves ajv's own cache too, so memory stays bounded
 * however many schemas arrive.
 */
import { createHash } from 'node:crypto'
import Ajv, { type AnySchemaObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { LRUCache } from 'lru-cache'

/** Largest schema accepted, as JSON. */
export const MAX_SCHEMA_BYTES = 16 * 1024
/** Deepest nesting of a schema. */
export const MAX_SCHEMA_DEPTH = 10
/** Most subschemas (objects) in one schema: what compiling it costs grows with this. */
export const MAX_SCHEMA_NODES = 100
const FORBIDDEN_KEYWORDS = new Set(['pattern', 'patternProperties', '$ref', '$dynamicRef', '$recursiveRef', '$id'])
/** Most values (objects, arrays and scalars) in one answer, and its deepest nesting. */
export const MAX_ANSWER_VALUES = 20_000
export const MAX_ANSWER_DEPTH = 32
/** Values that are data, not schemas: their objects are not subschemas. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: false, validateSchema: false })
addFormats(ajv)
const validators = new LRUCache<string, { schema: AnySchemaObject, validate: ValidateFunction }>({
  max: 200,
  dispose: entry => ajv.removeSchema(entry.schema),
})

/** Why `schema` cannot be used (as a sentence naming the problem), or undefined when it can. */
export function answerSchemaProblem(schema: unknown, what: string): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${what} must be a JSON Schema object`
  const text = JSON.stringify(schema)
  if (text.length > MAX_SCHEMA_BYTES) return `${what} is ${text.length} bytes; at most ${MAX_SCHEMA_BYTES} are accepted`
  const counter = { nodes: 0 }
  const problem = walk(schema, 0, counter)
  if (problem) return `${what} ${problem}`
  let valid: boolean
  try {
    valid = ajv.validateSchema(schema as AnySchemaObject) as boolean
  } catch (error) {
    return `${what} cannot be read as a JSON Schema: ${(error as Error).message}`
  }
  if (!valid) {
    const [error] = ajv.errors ?? []
    const where = error?.instancePath ? ` at "${error.instancePath.slice(1).replaceAll('/', '.')}"` : ''
    return `${what} is not a valid JSON Schema${where}: ${error?.message ?? 'it does not follow the JSON Schema rules'}`
  }
  return undefined
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null'])

/** Whether an array schema's `items` declare only scalar types (what ajv checks uniqueness of in linear time). */
function scalarItems(node: object): boolean {
  const items = (node as { items?: unknown }).items
  if (typeof items !== 'object' || items === null || Array.isArray(items)) return false
  const type = (items as { type?: unknown }).type
  const types = Array.isArray(type) ? type : [type]
  return types.length > 0 && types.every(item => typeof item === 'string' && SCALAR_TYPES.has(item))
}

function walk(node: unknown, depth: number, counter: { nodes: number }): string | undefined {
  if (depth > MAX_SCHEMA_DEPTH) return `nests deeper than ${MAX_SCHEMA_DEPTH} levels`
  if (Array.isArray(node)) {
    for (const item of node) {
      const problem = walk(item, depth + 1, counter)
      if (problem) return problem
    }
  } else if (typeof node === 'object' && node !== null) {
    if (++counter.nodes > MAX_SCHEMA_NODES) return `has more than ${MAX_SCHEMA_NODES} subschemas; keep it simpler (fewer allOf/anyOf/not clauses and nested objects)`
    if ('uniqueItems' in node && node.uniqueItems !== false && !scalarItems(node)) return 'uses "uniqueItems" over items that are not all of one declared scalar type (string, number, integer, boolean), which is not accepted here; check duplicates in the tool instead'
    for (const [key, value] of Object.entries(node)) {
      if (FORBIDDEN_KEYWORDS.has(key)) return `uses "${key}", which is not accepted here (use enum, minLength/maxLength or format instead of patterns; inline instead of $ref)`
      if (DATA_KEYWORDS.has(key)) continue
      const problem = walk(value, depth + 1, counter)
      if (problem) return problem
    }
  }
  return undefined
}

/** The validator of `schema` (one that passed `answerSchemaProblem`), compiled once while it is in the LRU. */
function compiled(schema: Record<string, unknown>): ValidateFunction {
  const text = JSON.stringify(schema)
  const key = createHash('sha256').update(text).digest('base64url')
  let entry = validators.get(key)
  if (!entry) {
    const copy = JSON.parse(text) as AnySchemaObject
    entry = { schema: copy, validate: ajv.compile(copy) }
    validators.set(key, entry)
  }
  return entry.validate
}

/** Why `value` is too big to check (as a sentence), or undefined: at most `MAX_ANSWER_VALUES` values, `MAX_ANSWER_DEPTH` deep. */
export function answerShapeProblem(value: unknown): string | undefined {
  let values = 0
  const stack: Array<{ value: unknown, depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!
    if (++values > MAX_ANSWER_VALUES) return `holds more than ${MAX_ANSWER_VALUES.toLocaleString('en')} values; send fewer items`
    if (depth > MAX_ANSWER_DEPTH) return `nests deeper than ${MAX_ANSWER_DEPTH} levels`
    if (typeof item === 'object' && item !== null) for (const child of Object.values(item)) stack.push({ value: child, depth: depth + 1 })
  }
  return undefined
}

/**
 * Checks `value` against a schema that passed `answerSchemaProblem` (its defaults are filled in
 * place); the first problem as a sentence, or undefined when it fits. A schema kept from before
 * a keyword was refused (a job stored earlier) is refused here too, never compiled.
 */
export function answerMismatch(schema: Record<string, unknown>, value: unknown): string | undefined {
  const shape = answerShapeProblem(value)
  if (shape) return shape
  const unusable = walk(schema, 0, { nodes: 0 })
  if (unusable) return `cannot be checked: what was asked ${unusable}`
  let validate: ValidateFunction
  try {
    validate = compiled(schema)
  } catch (error) {
    return `cannot be checked: what was asked is not a usable JSON Schema (${(error as Error).message})`
  }
  if (validate(value)) return undefined
  const [error] = validate.errors ?? []
  if (!error) return 'does not match what was asked'
  const where = error.instancePath ? `"${error.instancePath.slice(1).replaceAll('/', '.')}"` : 'the answer'
  return `${where} ${error.message ?? 'does not match what was asked'}`
}

/** Compiled schemas held now (for tests: it never passes the LRU's bound). */
export function compiledSchemaCount(): number {
  return validators.size
}
