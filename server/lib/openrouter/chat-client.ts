import { errorForPayload, OpenRouterError } from './errors'
import { fetchWithRetry, type RetryPolicy } from './fetch-with-retry'
import { normalizeFinishReason, parseChatCompletionStream, toUsage } from './stream-parser'
import type { ChatCompletionChunk, ChatCompletionRequest, ChatStreamEvent } from './types'

/** Where a request goes: OpenRouter, any compatible server, or the in-process demo model. */
export interface ChatEndpoint {
  baseUrl: string
  apiKey?: string
  /** Names the endpoint in errors a person reads. */
  label: string
  /** Replaces global fetch (the demo model answers in-process through this). */
  fetch?: typeof globalThis.fetch
}

export interface ChatClientOptions {
  retry: RetryPolicy
  /** Longest silence between chunks. */
  idleTimeoutMs: number
  /** Sent as HTTP-Referer so OpenRouter can attribute the app. */
  appUrl?: string
  /** Sent as X-OpenRouter-Title (and the older X-Title). */
  appTitle?: string
}

/** "OpenRouter" for openrouter.ai, else the host, so errors say which server failed. */
export function labelForBaseUrl(baseUrl: string): string {
  try {
    const { host, hostname } = new URL(baseUrl)
    return hostname === 'openrouter.ai' || hostname.endsWith('.openrouter.ai') ? 'OpenRouter' : host
  } catch {
    return baseUrl
  }
}

/** The URL of an endpoint path under a base URL with or without a trailing slash. */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}

/** Request headers: auth, attribution, and the SSE accept type. */
export function buildRequestHeaders(endpoint: ChatEndpoint, options: Pick<ChatClientOptions, 'appUrl' | 'appTitle'>): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Accept': 'text/event-stream',
  }
  if (endpoint.apiKey) headers.Authorization = `Bearer ${endpoint.apiKey}`
  if (options.appUrl) headers['HTTP-Referer'] = options.appUrl
  if (options.appTitle) {
    headers['X-OpenRouter-Title'] = options.appTitle
    headers['X-Title'] = options.appTitle
  }
  return headers
}

/** Events for a non-streamed JSON body: some servers ignore `stream: true`, free endpoints send `{error}`. */
function* eventsFromJsonBody(label: string, text: string): Generator<ChatStreamEvent> {
  let body: ChatCompletionChunk
  try {
    body = JSON.parse(text) as ChatCompletionChunk
  } catch {
    body = {}
  }
  if (body.error) {
    yield { type: 'error', error: errorForPayload(label, body.error) }
    yield { type: 'finish', finishReason: 'error', nativeFinishReason: null }
    return
  }
  const choice = body.choices?.[0]
  if (!choice?.message) {
    yield { type: 'error', error: new OpenRouterError({ kind: 'stream_error', message: `${label}: unexpected response (no stream and no answer)` }) }
    yield { type: 'finish', finishReason: 'error', nativeFinishReason: null }
    return
  }
  const { message } = choice
  if (message.reasoning) yield { type: 'reasoning-delta', text: message.reasoning }
  if (message.content) yield { type: 'text-delta', text: message.content }
  const toolCalls = message.tool_calls ?? []
  for (const [index, call] of toolCalls.entries()) {
    yield { type: 'tool-call', toolCall: { id: call.id, name: call.function.name, arguments: call.function.arguments || '{}', index } }
  }
  if (body.usage) yield { type: 'usage', usage: toUsage(body.usage) }
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : normalizeFinishReason(choice.finish_reason ?? 'stop')
  yield { type: 'finish', finishReason, nativeFinishReason: choice.native_finish_reason ?? choice.finish_reason ?? null }
}

/**
 * Streams one chat completion. Yields `response-start`, then text / reasoning deltas as they
 * arrive, complete tool calls, usage, and always ends with `finish`. Never throws: connection,
 * HTTP and in-stream failures arrive as an `error` event before `finish` (reason `error`).
 */
export async function* streamChatCompletion(
  endpoint: ChatEndpoint,
  request: ChatCompletionRequest,
  options: ChatClientOptions & { signal?: AbortSignal },
): AsyncGenerator<ChatStreamEvent> {
  let response: Response
  try {
    response = await fetchWithRetry(endpointUrl(endpoint.baseUrl, 'chat/completions'), {
      method: 'POST',
      headers: buildRequestHeaders(endpoint, options),
      body: JSON.stringify(request),
    }, { label: endpoint.label, policy: options.retry, signal: options.signal, fetch: endpoint.fetch })
  } catch (error) {
    yield { type: 'error', error: OpenRouterError.isInstance(error) ? error : new OpenRouterError({ kind: 'upstream_unavailable', message: `${endpoint.label}: ${(error as Error).message}`, cause: error }) }
    yield { type: 'finish', finishReason: 'error', nativeFinishReason: null }
    return
  }

  yield { type: 'response-start', generationId: response.headers.get('x-generation-id') }
  const contentType = response.headers.get('content-type') ?? ''
  if (contentType.includes('application/json')) {
    yield* eventsFromJsonBody(endpoint.label, await response.text())
    return
  }
  if (!response.body) {
    yield { type: 'error', error: new OpenRouterError({ kind: 'stream_interrupted', message: `${endpoint.label}: empty response` }) }
    yield { type: 'finish', finishReason: 'error', nativeFinishReason: null }
    return
  }
  yield* parseChatCompletionStream(response.body, { label: endpoint.label, idleTimeoutMs: options.idleTimeoutMs, signal: options.signal })
}
