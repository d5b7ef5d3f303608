/**
 * The form of a question a job asks (an MCP server's elicitation): the flat JSON Schema the spec
 * allows (strings with formats or choices, numbers, integers, booleans, lists of choices) as form
 * fields with their defaults, and the filled form back as the answer's content. Anything else in a
 * schema is shown as a plain text field.
 */

/** A choice of a select or multi-select. */
export interface FieldOption { value: string, label: string }

/** One field of the form. */
export interface FormField {
  name: string
  label: string
  description?: string
  kind: 'text' | 'email' | 'url' | 'date' | 'number' | 'integer' | 'boolean' | 'select' | 'multi'
  required: boolean
  options?: FieldOption[]
  min?: number
  max?: number
  minLength?: number
  maxLength?: number
  default?: unknown
}

type Schema = Record<string, unknown>

const MAX_FIELDS = 50

function choices(schema: Schema): FieldOption[] | undefined {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : []
    return schema.enum.map((value, index) => ({ value: String(value), label: String(names[index] ?? value) }))
  }
  const variants = (Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined) as Schema[] | undefined
  if (variants?.every(variant => variant && 'const' in variant)) return variants.map(variant => ({ value: String(variant.const), label: String(variant.title ?? variant.const) }))
  return undefined
}

function fieldOf(name: string, schema: Schema, required: boolean): FormField {
  const base = { name, label: String(schema.title ?? name), required, ...(typeof schema.description === 'string' ? { description: schema.description } : {}), ...('default' in schema ? { default: schema.default } : {}) }
  if (schema.type === 'boolean') return { ...base, kind: 'boolean' }
  if (schema.type === 'number' || schema.type === 'integer') {
    return { ...base, kind: schema.type, ...(typeof schema.minimum === 'number' ? { min: schema.minimum } : {}), ...(typeof schema.maximum === 'number' ? { max: schema.maximum } : {}) }
  }
  if (schema.type === 'array') {
    const options = choices((schema.items ?? {}) as Schema)
    if (options) return { ...base, kind: 'multi', options }
  }
  const options = choices(schema)
  if (options) return { ...base, kind: 'select', options }
  const kind = schema.format === 'email' ? 'email' : schema.format === 'uri' ? 'url' : schema.format === 'date' ? 'date' : 'text'
  return { ...base, kind, ...(typeof schema.minLength === 'number' ? { minLength: schema.minLength } : {}), ...(typeof schema.maxLength === 'number' ? { maxLength: schema.maxLength } : {}) }
}

/** The fields of `schema` (an object schema), in its order. */
export function formFields(schema: Schema | undefined): FormField[] {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>
  const required = new Set(Array.isArray(schema?.required) ? schema.required as string[] : [])
  return Object.entries(properties).slice(0, MAX_FIELDS).map(([name, property]) => fieldOf(name, property ?? {}, required.has(name)))
}

/** The form's starting values: each field's default, else empty. */
export function initialValues(fields: readonly FormField[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => {
    if (field.default !== undefined) return [field.name, field.kind === 'multi' && Array.isArray(field.default) ? [...field.default].map(String) : field.default]
    return [field.name, field.kind === 'boolean' ? false : field.kind === 'multi' ? [] : '']
  }))
}

/** The answer's content: empty optional fields left out, numbers as numbers. */
export function formContent(fields: readonly FormField[], values: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {}
  for (const field of fields) {
    const value = values[field.name]
    if (field.kind === 'boolean') content[field.name] = Boolean(value)
    else if (field.kind === 'multi') {
      if (Array.isArray(value) && (value.length > 0 || field.required)) content[field.name] = value
    } else if (value !== '' && value !== undefined && value !== null) {
      content[field.name] = field.kind === 'number' || field.kind === 'integer' ? Number(value) : String(value)
    }
  }
  return content
}
