/** Largest argument payload a tool call may carry (64 KiB of UTF-8). */
export const MAX_TOOL_ARGUMENTS_BYTES = 64 * 1024

/** Keys that could reach an object's prototype if a handler merged the arguments somewhere. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

export type ParsedToolArguments =
  | { ok: true, args: Record<string, unknown> }
  | { ok: false, error: string }

function formatKiB(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`
}

/** Finds a forbidden key anywhere in a parsed JSON value; iterative, so deep nesting cannot overflow the stack. */
function findForbiddenKey(root: unknown): string | null {
  const stack: Array<{ value: unknown, path: string }> = [{ value: root, path: '' }]
  while (stack.length > 0) {
    const { value, path } = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: `${path}[${index}]` }))
      continue
    }
    for (const key of Object.keys(value)) {
      const keyPath = path ? `${path}.${key}` : key
      if (FORBIDDEN_KEYS.has(key)) return keyPath
      stack.push({ value: (value as Record<string, unknown>)[key], path: keyPath })
    }
  }
  return null
}

/**
 * Parses a tool call's `arguments` string. Models send `""` (or nothing) for tools without
 * parameters, which means `{}`. Never throws: problems come back as a readable error.
 */
export function parseToolArguments(argsJson: string | null | undefined): ParsedToolArguments {
  if (argsJson === null || argsJson === undefined) return { ok: true, args: {} }
  if (typeof argsJson !== 'string') {
    return { ok: false, error: `arguments must be a JSON string, got ${typeof argsJson}` }
  }
  const bytes = Buffer.byteLength(argsJson, 'utf8')
  if (bytes > MAX_TOOL_ARGUMENTS_BYTES) {
    return {
      ok: false,
      error: `arguments are ${formatKiB(bytes)}, over the ${formatKiB(MAX_TOOL_ARGUMENTS_BYTES)} limit`,
    }
  }
  if (argsJson.trim() === '') return { ok: true, args: {} }

  let parsed: unknown
  try {
    parsed = JSON.parse(argsJson)
  } catch (error) {
    return { ok: false, error: `arguments are not valid JSON (${(error as Error).message})` }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    const kind = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`
    return { ok: false, error: `arguments must be a JSON object, got ${kind}` }
  }
  const forbidden = findForbiddenKey(parsed)
  if (forbidden) {
    return { ok: false, error: `field "${forbidden}" is not allowed` }
  }
  return { ok: true, args: parsed as Record<string, unknown> }
}
