/**
 * A SCIM PATCH request (RFC 7644 §3.5.2) read into plain operations, in the forms Entra ID and
 * Okta send: Entra's `{"op":"Replace","path":"active","value":"False"}` (capitalised, booleans as
 * strings), Okta's `{"op":"replace","value":{"active":false}}` (no path: each attribute of the
 * value), paths with a filter (`members[value eq "…"]`, `emails[type eq "work"].value`) and with
 * the core schema's URN in front. At most 100 operations.
 */
import { attributeOf, parseScimFilter } from './scim-filter'
import { ScimError, SCIM_SCHEMAS } from './scim-protocol'

export interface ScimPatchOperation {
  op: 'add' | 'replace' | 'remove'
  /** The attribute, lower-cased (`active`, `name.givenname`, `members`, `emails`); none: the resource's attributes in `value`. */
  path: string
  /** A path's filter: `members[value eq "x"]` → `{ attribute: 'value', value: 'x' }`. */
  where?: { attribute: string, value: string | number | boolean | null }
  /** What follows a filter: `emails[type eq "work"].value` → `value`. */
  sub?: string
  value: unknown
}

const MAX_OPERATIONS = 100

const invalidPath = (path: string) => new ScimError(400, `The path "${path.slice(0, 200)}" cannot be read: use attribute, attribute.sub or attribute[sub eq "value"].`, 'invalidPath')

function readPath(path: string): Pick<ScimPatchOperation, 'path' | 'where' | 'sub'> {
  if (path.length > 500) throw invalidPath(path)
  const open = path.indexOf('[')
  if (open < 0) return { path: attributeOf(path) }
  const close = path.indexOf(']', open)
  if (close < 0) throw invalidPath(path)
  const [comparison, ...more] = parseScimFilter(path.slice(open + 1, close))
  if (!comparison || more.length > 0) throw invalidPath(path)
  const rest = path.slice(close + 1)
  if (rest !== '' && !/^\.\w{1,50}$/.test(rest)) throw invalidPath(path)
  return { path: attributeOf(path.slice(0, open)), where: { attribute: comparison.path, value: comparison.value }, ...(rest ? { sub: rest.slice(1).toLowerCase() } : {}) }
}

/** An object value without a path, as one operation per attribute (`{ name: { givenName } }` → `name.givenname`). */
function spread(op: ScimPatchOperation['op'], value: Record<string, unknown>): ScimPatchOperation[] {
  const operations: ScimPatchOperation[] = []
  for (const [key, inner] of Object.entries(value)) {
    const attribute = attributeOf(key)
    // An extension's attributes (Entra's enterprise User: department, manager…) are not kept.
    if (attribute.startsWith('urn:')) continue
    if (attribute === 'name' && inner && typeof inner === 'object' && !Array.isArray(inner)) {
      for (const [part, text] of Object.entries(inner)) operations.push({ op, path: `name.${part.toLowerCase()}`, value: text })
    } else operations.push({ op, path: attribute, value: inner })
  }
  return operations
}

/** The operations of a PATCH body; 400 with what is wrong for one that is not a PatchOp. */
export function readScimPatch(body: unknown): ScimPatchOperation[] {
  const request = body as { schemas?: unknown, Operations?: unknown, operations?: unknown } | null
  const listed = request?.Operations ?? request?.operations
  if (!request || typeof request !== 'object' || !Array.isArray(listed)) {
    throw new ScimError(400, `A PATCH body is {"schemas":["${SCIM_SCHEMAS.patch}"],"Operations":[…]}.`, 'invalidSyntax')
  }
  if (listed.length > MAX_OPERATIONS) throw new ScimError(400, `A PATCH may have at most ${MAX_OPERATIONS} operations; it has ${listed.length}.`, 'tooMany')
  return listed.flatMap((item: unknown, index): ScimPatchOperation[] => {
    const operation = item as { op?: unknown, path?: unknown, value?: unknown } | null
    const op = typeof operation?.op === 'string' ? operation.op.toLowerCase() : ''
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new ScimError(400, `Operation ${index + 1}: "op" must be add, replace or remove.`, 'invalidSyntax')
    if (typeof operation!.path === 'string' && operation!.path.trim() !== '') {
      const path = readPath(operation!.path.trim())
      return path.path.startsWith('urn:') ? [] : [{ op, ...path, value: operation!.value }]
    }
    if (op === 'remove') throw new ScimError(400, `Operation ${index + 1}: a remove needs a path.`, 'noTarget')
    const value = operation!.value
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ScimError(400, `Operation ${index + 1}: without a path, the value must be an object of attributes.`, 'invalidValue')
    return spread(op, value as Record<string, unknown>)
  })
}

/** A boolean as SCIM clients send one: `true`, or Entra's `"True"`; 400 otherwise. */
export function scimBoolean(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string' && /^(?:true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  throw new ScimError(400, `${attribute} must be true or false.`, 'invalidValue')
}

/** A string attribute, trimmed and at most `max` characters; 400 otherwise. */
export function scimText(value: unknown, attribute: string, max = 200): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) throw new ScimError(400, `${attribute} must be text of 1 to ${max} characters.`, 'invalidValue')
  return value.trim()
}
