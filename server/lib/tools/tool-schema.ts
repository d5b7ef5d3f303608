import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { z } from 'zod'
import type { ToolParameters } from './tool-types'
import type { JsonSchemaObject } from '../openrouter/types'

/** Tool names OpenRouter (and OpenAI) accept: letters, digits, `_` and `-`, at most 64. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

const EMPTY_PARAMETERS: JsonSchemaObject = { type: 'object', properties: {} }

// One Ajv instance for every tool: validators are compiled once per tool at registration.
// useDefaults fills schema defaults (e.g. zod `.default()`), so handlers see complete args.
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false })
addFormats(ajv)

/** Throws when a tool name would be refused by OpenRouter. */
export function assertValidToolName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Invalid tool name ${JSON.stringify(name)}: use 1-64 letters, digits, "_" or "-".`,
    )
  }
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value
}

/**
 * Turns a tool's parameters (JSON Schema or zod object) into the plain JSON Schema object
 * that is both validated against and sent to the model.
 */
export function toJsonSchemaParameters(toolName: string, parameters: ToolParameters | undefined): JsonSchemaObject {
  if (parameters === undefined) return structuredClone(EMPTY_PARAMETERS)
  let schema: Record<string, unknown>
  if (isZodSchema(parameters)) {
    schema = z.toJSONSchema(parameters, { target: 'draft-7', io: 'input' }) as Record<string, unknown>
    delete schema.$schema
  } else if (typeof parameters === 'object' && parameters !== null && !Array.isArray(parameters)) {
    schema = structuredClone(parameters) as Record<string, unknown>
  } else {
    throw new TypeError(`Tool "${toolName}": parameters must be a JSON Schema object or a zod object schema.`)
  }
  if (schema.type !== 'object') {
    throw new TypeError(
      `Tool "${toolName}": parameters must describe an object (type "object"), got type ${JSON.stringify(schema.type)}.`,
    )
  }
  return schema as JsonSchemaObject
}

/** Compiles a validator for a tool's parameters; throws with the tool name when the schema is invalid. */
export function compileArgumentsValidator(toolName: string, schema: JsonSchemaObject): ValidateFunction {
  try {
    return ajv.compile(schema)
  } catch (error) {
    throw new TypeError(`Tool "${toolName}": invalid parameters schema: ${(error as Error).message}`)
  }
}

/** Forgets a compiled validator so an unregistered tool leaves nothing behind. */
export function releaseArgumentsValidator(schema: JsonSchemaObject): void {
  ajv.removeSchema(schema)
}

function fieldName(instancePath: string): string {
  // "/location" -> "location", "/items/0/name" -> "items[0].name"
  return instancePath
    .split('/')
    .slice(1)
    .map(part => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '')
}

function describeError(error: ErrorObject): string {
  const field = fieldName(error.instancePath)
  const at = field ? `field "${field}"` : 'arguments'
  switch (error.keyword) {
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty
      return `missing required field "${field ? `${field}.` : ''}${missing}"`
    }
    case 'additionalProperties': {
      const extra = (error.params as { additionalProperty: string }).additionalProperty
      return `unknown field "${field ? `${field}.` : ''}${extra}"`
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues
      return `${at} must be one of ${allowed.map(value => JSON.stringify(value)).join(', ')}`
    }
    default:
      return `${at} ${error.message ?? 'is invalid'}`
  }
}

/** One readable sentence naming every invalid field, for the model and for people. */
export function formatValidationErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors?.length) return 'arguments are invalid'
  const messages = [...new Set(errors.map(describeError))]
  return messages.join('; ')
}
