/**
 * One request to an OpenAI-style JSON endpoint the operator names (embeddings, rerank): POSTed
 * with its key in the Authorization header only, within a time limit, its answer read up to a size
 * and parsed; every way it can fail told by the caller's own error (`fail`), with at most the start
 * of what the endpoint said and never the key.
 */
import { readTextUpTo } from '../bounded-body'

export interface JsonEndpointRequest {
  url: string
  apiKey?: string
  body: unknown
  timeoutMs: number
  maxBytes: number
  signal?: AbortSignal
  /** Names it in messages ("The rerank endpoint"). */
  what: string
  /** The caller's error for a message. */
  fail: (message: string) => Error
  fetcher: typeof fetch
}

/** The endpoint's answer, parsed (see the module comment). */
export async function postJson(request: JsonEndpointRequest): Promise<unknown> {
  const { what, fail } = request
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`
  const timeout = AbortSignal.timeout(request.timeoutMs)
  let response: Response
  try {
    response = await request.fetcher(request.url, { method: 'POST', headers, body: JSON.stringify(request.body), signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout })
  } catch (error) {
    if (timeout.aborted) throw fail(`${what} did not answer within ${request.timeoutMs} ms.`)
    throw fail(`${what} could not be reached (${(error as Error).message}).`)
  }
  const text = await readTextUpTo(response, request.maxBytes)
  if (text === undefined) throw fail(`${what} answered with more than ${request.maxBytes} bytes.`)
  if (!response.ok) throw fail(`${what} answered ${response.status}: ${text.slice(0, 200)}`)
  try {
    return JSON.parse(text)
  } catch {
    throw fail(`${what} answered with something other than JSON.`)
  }
}
