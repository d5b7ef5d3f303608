const ERROR_MARKER = Symbol.for('or3.openRouterError')

/** "400 ms" below a second, else whole seconds: for messages about deadlines. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`
}

/** What went wrong, in categories a UI can turn into advice. */
export type OpenRouterErrorKind =
  | 'bad_request' // 400, 404, 413, 422
  | 'unauthorized' // 401
  | 'insufficient_credits' // 402
  | 'forbidden' // 403 (moderation, permissions)
  | 'rate_limited' // 429
  | 'upstream_unavailable' // 5xx, network failure
  | 'timeout' // no headers / no chunk in time, 408, 524
  | 'stream_interrupted' // connection lost mid-stream, or no [DONE]
  | 'stream_error' // error chunk inside a 200 stream
  | 'aborted'

const STATUS_PHRASES: Record<number, [OpenRouterErrorKind, string]> = {
  400: ['bad_request', 'bad request'],
  401: ['unauthorized', 'invalid or missing API key'],
  402: ['insufficient_credits', 'insufficient credits'],
  403: ['forbidden', 'request refused (moderation or permissions)'],
  404: ['bad_request', 'model or endpoint not found'],
  408: ['timeout', 'request timed out'],
  413: ['bad_request', 'request too large'],
  422: ['bad_request', 'request could not be processed'],
  429: ['rate_limited', 'rate limited'],
  500: ['upstream_unavailable', 'internal error'],
  502: ['upstream_unavailable', 'model provider is down or sent an invalid answer'],
  503: ['upstream_unavailable', 'no provider available for this model'],
  524: ['timeout', 'provider timed out'],
  529: ['upstream_unavailable', 'provider overloaded'],
}

const HINTS: Partial<Record<OpenRouterErrorKind, string>> = {
  unauthorized: 'Check the API key in Settings (or NUXT_OPENROUTER_API_KEY).',
  insufficient_credits: 'Add credits to your OpenRouter account, or pick a free or the offline demo model.',
  forbidden: 'Rephrase the request or choose another model.',
  rate_limited: 'Wait a moment and try again, or pick another model.',
  upstream_unavailable: 'Try again shortly, or pick another model.',
  timeout: 'Try again; if it keeps happening, pick another model.',
  stream_interrupted: 'The partial answer was kept; try again to get the rest.',
}

/**
 * An error from the model endpoint, carrying what a person needs: the HTTP status, the upstream's
 * own message, a category, and a hint on what to do. `message` reads like
 * "OpenRouter: insufficient credits (402)".
 */
export class OpenRouterError extends Error {
  override name = 'OpenRouterError'
  readonly [ERROR_MARKER] = true
  readonly kind: OpenRouterErrorKind
  /** HTTP status, or the numeric `code` of an in-stream error; null when there was no response. */
  readonly status: number | null
  /** The upstream's own explanation, when it sent one. */
  readonly upstreamMessage: string | null
  readonly hint: string | null
  /** Whether repeating the same request may succeed. */
  readonly retryable: boolean

  constructor(options: {
    kind: OpenRouterErrorKind
    message: string
    status?: number | null
    upstreamMessage?: string | null
    retryable?: boolean
    cause?: unknown
  }) {
    super(options.message, { cause: options.cause })
    this.kind = options.kind
    this.status = options.status ?? null
    this.upstreamMessage = options.upstreamMessage ?? null
    this.hint = HINTS[options.kind] ?? null
    this.retryable = options.retryable ?? false
  }

  /** True for OpenRouterErrors, even across module copies (as in the AI SDK's `isInstance`). */
  static isInstance(value: unknown): value is OpenRouterError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ERROR_MARKER] === true
  }

  /** Plain data for storage and for the browser. */
  toJSON() {
    return { name: this.name, kind: this.kind, message: this.message, status: this.status, upstreamMessage: this.upstreamMessage, hint: this.hint }
  }
}

/** Reads `{error: {code, message}}` (or a bare string) out of an upstream error body. */
export function readUpstreamMessage(body: string): string | null {
  if (!body.trim()) return null
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string, message?: unknown }
    if (typeof parsed.error === 'string') return parsed.error
    if (typeof parsed.error?.message === 'string') return parsed.error.message
    if (typeof parsed.message === 'string') return parsed.message
  } catch {
    // Not JSON: a proxy's HTML or plain-text page.
  }
  return body.length > 300 ? `${body.slice(0, 300)}…` : body.trim()
}

/** The error for a non-2xx response; `label` names the endpoint ("OpenRouter", "localhost:11434"). */
export function errorForStatus(label: string, status: number, upstreamMessage: string | null): OpenRouterError {
  const [kind, phrase] = STATUS_PHRASES[status]
    ?? (status >= 500 ? ['upstream_unavailable', 'server error'] as const : ['bad_request', 'request failed'] as const)
  return new OpenRouterError({
    kind,
    message: `${label}: ${phrase} (${status})`,
    status,
    upstreamMessage,
    retryable: status >= 500 || status === 429,
  })
}

/** The error for an `error` object inside a 200 response (mid-stream, or a non-stream body). */
export function errorForPayload(label: string, payload: { code?: number | string, message?: string }): OpenRouterError {
  const code = typeof payload.code === 'number' ? payload.code : Number.parseInt(String(payload.code ?? ''), 10)
  const upstreamMessage = payload.message ?? null
  if (Number.isFinite(code) && STATUS_PHRASES[code]) {
    const error = errorForStatus(label, code, upstreamMessage)
    return new OpenRouterError({ kind: error.kind === 'upstream_unavailable' ? 'stream_error' : error.kind, message: error.message, status: code, upstreamMessage })
  }
  const codeText = payload.code !== undefined ? ` (${String(payload.code)})` : ''
  return new OpenRouterError({ kind: 'stream_error', message: `${label}: ${upstreamMessage ?? 'the model reported an error'}${codeText}`, upstreamMessage })
}
