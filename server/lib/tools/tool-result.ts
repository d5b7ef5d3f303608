/** Largest result a tool may hand back to the model (256 KiB of UTF-8). */
export const MAX_TOOL_RESULT_BYTES = 256 * 1024

export type SerializedToolResult =
  | { ok: true, result: string }
  | { ok: false, error: string }

/**
 * Turns what a handler returned into the string the model receives: strings pass through,
 * other JSON values are stringified, anything JSON cannot carry is an error.
 */
export function serializeToolResult(value: unknown): SerializedToolResult {
  let result: string | undefined
  if (typeof value === 'string') {
    result = value
  } else {
    if (value === undefined) return { ok: false, error: 'the tool returned nothing (undefined)' }
    if (typeof value === 'function' || typeof value === 'symbol') {
      return { ok: false, error: `the tool returned a ${typeof value}, which is not JSON-serialisable` }
    }
    try {
      result = JSON.stringify(value)
    } catch (error) {
      return { ok: false, error: `the tool returned a value that is not JSON-serialisable (${(error as Error).message})` }
    }
    if (result === undefined) return { ok: false, error: 'the tool returned a value that is not JSON-serialisable' }
  }
  const bytes = Buffer.byteLength(result, 'utf8')
  if (bytes > MAX_TOOL_RESULT_BYTES) {
    return {
      ok: false,
      error: `the result is ${(bytes / 1024).toFixed(1)} KiB, over the ${MAX_TOOL_RESULT_BYTES / 1024} KiB limit; return less data`,
    }
  }
  return { ok: true, result }
}
