/**
 * A test client for the job API: keeps its session cookie like a browser, and reads job streams
 * the way an EventSource does (ids, Last-Event-ID on reconnect), applying each event to a view of
 * the job that fails loudly on a gap or a duplicate.
 */
import { createParser } from 'eventsource-parser'
import type { PublicJob, ActiveToolCall } from '../../shared/types/job'

/** One parsed SSE event. */
export interface ReceivedEvent {
  id?: string
  event: string
  data: any
}

/** A browser-like client with its own session (cookie jar of one cookie). */
export class SessionClient {
  /** The `cookie` header this client sends (its session); copy it to act as the same user elsewhere. */
  cookie = ''
  /** The session's companions (`or3-session-second-step`: a sign-in waiting for its code; `or3-session-passkey`: a passkey sign-in's challenge), sent with it. */
  private readonly companions = new Map<string, string>()

  constructor(readonly baseUrl: string) {}

  /** fetch with this client's session cookie; stores a cookie the server sets. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    const sent = [this.cookie, ...this.companions.values()].filter(Boolean)
    if (sent.length > 0) headers.set('cookie', sent.join('; '))
    const response = await fetch(`${this.baseUrl}${path}`, { ...init, headers })
    const setCookies = response.headers.getSetCookie()
    const setCookie = setCookies.find(value => value.startsWith('or3-session='))
    if (setCookie) this.cookie = setCookie.split(';')[0]!
    for (const value of setCookies.filter(item => /^or3-session-(second-step|passkey)=/.test(item))) {
      const pair = value.split(';')[0]!
      const name = pair.slice(0, pair.indexOf('='))
      if (pair.endsWith('=')) this.companions.delete(name)
      else this.companions.set(name, pair)
    }
    return response
  }

  /** fetch that parses JSON and fails on an error status. */
  async json<T = any>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await this.fetch(path, init)
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`)
    return await response.json() as T
  }

  /** POST a JSON body. */
  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  }

  /** Starts a background job and returns its id. */
  async startJob(body: Record<string, unknown>): Promise<string> {
    const response = await this.post('/api/openrouter/stream', { ...body, _background: true })
    if (response.status !== 202) throw new Error(`starting a job answered ${response.status}: ${await response.text()}`)
    return (await response.json() as { jobId: string }).jobId
  }
}

/** What a viewer has seen of a job, rebuilt from events exactly as a UI would. */
export class JobView {
  content = ''
  reasoning = ''
  status: string | undefined
  toolCalls = new Map<string, ActiveToolCall>()
  lastEventId: string | undefined
  snapshots = 0
  events: ReceivedEvent[] = []
  job: PublicJob | undefined
  finishEvent: any

  /** Applies one event; throws when a delta does not continue the text exactly. */
  apply(received: ReceivedEvent): void {
    this.events.push(received)
    if (received.id) this.lastEventId = received.id
    const data = received.data
    switch (received.event) {
      case 'snapshot':
        this.snapshots++
        this.job = data.job
        this.content = data.job.content
        this.reasoning = data.job.reasoning
        this.status = data.job.status
        this.toolCalls = new Map(data.job.activeToolCalls.map((call: ActiveToolCall) => [call.id, call]))
        break
      case 'delta':
        if (data.contentOffset !== this.content.length) throw new Error(`delta at offset ${data.contentOffset} but the view has ${this.content.length} characters (gap or duplicate)`)
        this.content += data.content ?? ''
        this.reasoning += data.reasoning ?? ''
        break
      case 'tool-call':
        this.toolCalls.set(data.toolCall.id, data.toolCall)
        break
      case 'status':
        this.status = data.status
        this.finishEvent = data
        break
    }
  }
}

/**
 * Connects to a job stream and applies events to `view` until the stream ends, `until` returns
 * true, or `signal` aborts. Sends `Last-Event-ID` from the view, as EventSource does on reconnect.
 */
export async function watchJob(client: SessionClient, jobId: string, view: JobView, options: { until?: (view: JobView) => boolean, signal?: AbortSignal } = {}): Promise<Response> {
  const controller = new AbortController()
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true })
  const headers: Record<string, string> = { accept: 'text/event-stream' }
  if (view.lastEventId) headers['last-event-id'] = view.lastEventId
  const response = await client.fetch(`/api/jobs/${jobId}/stream`, { headers, signal: controller.signal })
  if (!response.ok || !response.body) return response
  await consumeEvents(response, view, controller, options.until)
  return response
}

/** Reads SSE events from `response` into `view` until the end (or `until`, which aborts the request). */
export async function consumeEvents(response: Response, view: JobView, controller?: AbortController, until?: (view: JobView) => boolean): Promise<void> {
  let stop = false
  const parser = createParser({
    onEvent: (message) => {
      if (stop) return
      view.apply({ id: message.id, event: message.event ?? 'message', data: JSON.parse(message.data) })
      if (until?.(view)) stop = true
    },
  })
  const decoder = new TextDecoder()
  try {
    for await (const chunk of response.body!) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
      if (stop) {
        controller?.abort()
        break
      }
    }
  } catch (error) {
    if (!stop && !(controller?.signal.aborted)) throw error
  }
}

/** Polls `GET /api/jobs/:id` until the job is no longer streaming. */
export async function waitForJobEnd(client: SessionClient, jobId: string, timeoutMs = 20_000): Promise<PublicJob> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const job = await client.json<PublicJob>(`/api/jobs/${jobId}`)
    if (job.status !== 'streaming') return job
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`job ${jobId} did not finish within ${timeoutMs} ms`)
}

/** A new account's signed-in client (sign-up must be open, or it is the first account). */
export async function registerAccount(url: string, name: string): Promise<SessionClient> {
  const client = new SessionClient(url)
  const created = await client.post('/api/auth/register', { name, password: 'a long enough password' })
  if (created.status !== 201) throw new Error(`registering ${name} answered ${created.status}: ${await created.text()}`)
  return client
}
