/**
 * The host side of the MCP Apps bridge (JSON-RPC 2.0 over postMessage with the page's frame): which
 * messages a page may send, read strictly (a page is someone else's code). Requests get a result or
 * an error; notifications none.
 */

/** One message from a page, checked: a request (with an id), or a notification. */
export type BridgeMessage =
  | { kind: 'request', id: string | number, method: string, params: Record<string, unknown> }
  | { kind: 'notification', method: string, params: Record<string, unknown> }

/** The message `data` is, when it is a JSON-RPC request or notification of sensible size; else undefined (ignored). */
export function bridgeMessageOf(data: unknown): BridgeMessage | undefined {
  if (!data || typeof data !== 'object') return undefined
  const { jsonrpc, id, method, params } = data as Record<string, unknown>
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method.length === 0 || method.length > 100) return undefined
  const safeParams = params && typeof params === 'object' && !Array.isArray(params) ? params as Record<string, unknown> : {}
  if (id === undefined || id === null) return { kind: 'notification', method, params: safeParams }
  if ((typeof id === 'string' && id.length <= 100) || (typeof id === 'number' && Number.isFinite(id))) return { kind: 'request', id, method, params: safeParams }
  return undefined
}

/** JSON-RPC's error codes the bridge answers with. */
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const REFUSED = -32000

/** A link a page may open: http(s) only, in a new tab without an opener. */
export function openableLink(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.length > 2_000) return undefined
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined
  } catch {
    return undefined
  }
}

/** The text of a `ui/message` (its text content), bounded; undefined when it has none. */
export function messageTextOf(params: Record<string, unknown>): string | undefined {
  const content = params.content
  const blocks = Array.isArray(content) ? content : [content]
  const text = blocks.map(block => (block && typeof block === 'object' && (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string' ? (block as { text: string }).text : '')).filter(Boolean).join('\n').trim()
  return text ? text.slice(0, 10_000) : undefined
}

/** The tool result a page is told of: the text the model got, and its structured content when it is JSON. */
export function toolResultFor(result: string | undefined, error: string | undefined): { content: Array<{ type: 'text', text: string }>, structuredContent?: Record<string, unknown>, isError?: boolean } {
  if (error !== undefined) return { content: [{ type: 'text', text: error }], isError: true }
  const text = result ?? ''
  let structuredContent: Record<string, unknown> | undefined
  if (text.trimStart().startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as unknown
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) structuredContent = parsed as Record<string, unknown>
    } catch {
      // plain text
    }
  }
  return { content: [{ type: 'text', text }], ...(structuredContent ? { structuredContent } : {}) }
}
