import type { ChatCompletionRequest } from '../../openrouter/types'
import { createDemoCompletionResponse, demoModelList, type DemoStreamOptions } from './demo-stream'

/** The demo model's own base URL; requests to it never leave the process. */
export const DEMO_BASE_URL = 'http://offline-demo.or3.invalid/api/v1'

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
}

/**
 * A fetch that serves the demo model's endpoints in-process, so the demo goes through the same
 * client code (request building, SSE parsing, tool loop) as OpenRouter, with no socket.
 */
export function createDemoModelFetch(options: DemoStreamOptions): typeof globalThis.fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    if (!url.href.startsWith(DEMO_BASE_URL)) return jsonResponse(404, { error: { code: 404, message: `Not a demo endpoint: ${url.href}` } })
    const path = url.href.slice(DEMO_BASE_URL.length).split('?')[0]
    const method = (init?.method ?? 'GET').toUpperCase()
    if (init?.signal?.aborted) throw init.signal.reason
    if (method === 'GET' && path === '/models') return jsonResponse(200, demoModelList())
    if (method === 'POST' && path === '/chat/completions') {
      let request: ChatCompletionRequest
      try {
        request = JSON.parse(String(init?.body ?? '{}')) as ChatCompletionRequest
      } catch {
        return jsonResponse(400, { error: { code: 400, message: 'Request body is not valid JSON' } })
      }
      if (!Array.isArray(request.messages)) return jsonResponse(400, { error: { code: 400, message: '"messages" must be an array' } })
      return createDemoCompletionResponse(request, options)
    }
    return jsonResponse(404, { error: { code: 404, message: `No demo endpoint ${method} ${path}` } })
  }
}
