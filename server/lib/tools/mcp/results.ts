/**
 * An MCP tool result as the model reads it. Text blocks are kept as they are; structured content
 * is added as JSON when the text does not already carry it; an embedded text resource is kept with
 * its URI; images, audio and binary resources cannot be read by a chat model as tool output, so
 * each becomes a one-line note of what it was and its size. The whole is cut to `maxBytes` of
 * UTF-8 (the registry's result limit) with a note saying so. `isError` results become tool errors (thrown, so the executor reports them).
 */

/** The parts of a `CallToolResult` this reads (any protocol version). */
export interface McpCallResult {
  content?: Array<Record<string, unknown>>
  structuredContent?: unknown
  isError?: boolean
}

/** Raised for an `isError` result: the tool ran and reported a failure. */
export class McpToolError extends Error {
  override name = 'McpToolError'
}

function describeBinary(kind: string, mimeType: unknown, data: unknown): string {
  const bytes = typeof data === 'string' ? Math.floor(data.length * 3 / 4) : 0
  return `[${kind}${typeof mimeType === 'string' ? ` ${mimeType}` : ''}, ${bytes.toLocaleString('en')} bytes, not shown to the model]`
}

function blockText(block: Record<string, unknown>): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : ''
    case 'image':
      return describeBinary('image', block.mimeType, block.data)
    case 'audio':
      return describeBinary('audio', block.mimeType, block.data)
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>
      const uri = typeof resource.uri === 'string' ? resource.uri : 'resource'
      if (typeof resource.text === 'string') return `[resource ${uri}]\n${resource.text}`
      return `[resource ${uri}: ${describeBinary('binary', resource.mimeType, resource.blob).slice(1, -1)}]`
    }
    case 'resource_link':
      return `[link ${typeof block.uri === 'string' ? block.uri : ''}${typeof block.name === 'string' ? ` (${block.name})` : ''}]`
    default:
      return `[${String(block.type)} content, not shown to the model]`
  }
}

/** The longest start of `text` that fits in `maxBytes` of UTF-8. */
function fitBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  let low = 0
  let high = Math.min(text.length, maxBytes)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (Buffer.byteLength(text.slice(0, middle)) <= maxBytes) low = middle
    else high = middle - 1
  }
  return text.slice(0, low)
}

/** The text the model gets for `result`, at most `maxBytes` of UTF-8; throws `McpToolError` for an `isError` result. */
export function mcpResultText(result: McpCallResult, maxBytes: number): string {
  const parts = (result.content ?? []).map(blockText).filter(part => part !== '')
  if (result.structuredContent !== undefined) {
    const structured = JSON.stringify(result.structuredContent)
    if (!parts.some(part => part.includes(structured))) parts.push(structured)
  }
  let text = parts.join('\n\n')
  const bytes = Buffer.byteLength(text)
  if (bytes > maxBytes) {
    const note = `\n[cut: the tool returned ${bytes.toLocaleString('en')} bytes of text; the first part is shown]`
    text = fitBytes(text, maxBytes - Buffer.byteLength(note)) + note
  }
  if (result.isError) throw new McpToolError(text || 'The tool reported an error without a message.')
  return text
}
