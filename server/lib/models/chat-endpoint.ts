/**
 * Which endpoint answers a model: the in-process demo model, or OpenRouter (or a compatible
 * server) with the user's key or the server's. Plain Node module, explicit imports.
 */
import { createDemoModelFetch, DEMO_BASE_URL } from './demo/demo-fetch'
import { DEMO_MODEL_ID } from './demo/demo-planner'
import type { ServerConfig } from '../config/server-config'
import { labelForBaseUrl, type ChatClientOptions, type ChatEndpoint } from '../openrouter/chat-client'
import { DomainError, type HttpAnswer } from '../domain-error'

export { DEMO_MODEL_ID } from './demo/demo-planner'

/** Raised when a model needs a key nobody gave; the message says how to fix it. */
export class MissingApiKeyError extends DomainError {
  override name = 'MissingApiKeyError'
  constructor(message: string, readonly model?: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'API key needed', message: this.message, i18n: this.model ? { key: 'model.needsKey', params: { model: this.model } } : undefined }
  }

  static isInstance(error: unknown): error is MissingApiKeyError {
    return error instanceof Error && error.name === 'MissingApiKeyError'
  }
}

const demoFetches = new Map<number, typeof globalThis.fetch>()

function demoFetch(tokenDelayMs: number): typeof globalThis.fetch {
  let fetch = demoFetches.get(tokenDelayMs)
  if (!fetch) demoFetches.set(tokenDelayMs, fetch = createDemoModelFetch({ tokenDelayMs }))
  return fetch
}

/** Whether requests to `baseUrl` need an API key (OpenRouter does; a local Ollama does not). */
export function requiresApiKey(baseUrl: string): boolean {
  return labelForBaseUrl(baseUrl) === 'OpenRouter'
}

/** The endpoint serving `model`; the user's own key wins over the server's. */
export function resolveChatEndpoint(model: string, config: ServerConfig, userApiKey?: string): ChatEndpoint {
  if (model === DEMO_MODEL_ID) {
    if (!config.demoModel.enabled) throw new MissingApiKeyError('The offline demo model is switched off on this server (NUXT_DEMO_MODEL_ENABLED=false).')
    return { baseUrl: DEMO_BASE_URL, label: 'Offline demo model', fetch: demoFetch(config.demoModel.tokenDelayMs) }
  }
  const apiKey = userApiKey || config.openrouter.apiKey
  const { baseUrl } = config.openrouter
  if (!apiKey && requiresApiKey(baseUrl)) {
    throw new MissingApiKeyError(`Model "${model}" needs an OpenRouter API key: add yours in Settings, ask the operator to set NUXT_OPENROUTER_API_KEY, or choose the offline demo model (${DEMO_MODEL_ID}).`, model)
  }
  return { baseUrl, apiKey: apiKey || undefined, label: labelForBaseUrl(baseUrl) }
}

/** Client deadlines and retry policy from the runtime config. */
export function chatClientOptions(config: ServerConfig): ChatClientOptions {
  const { openrouter } = config
  return {
    retry: {
      maxRetries: 1,
      baseDelayMs: openrouter.retryBaseDelayMs,
      maxRetryAfterMs: openrouter.maxRetryAfterMs,
      headersTimeoutMs: openrouter.headersTimeoutMs,
    },
    idleTimeoutMs: openrouter.idleTimeoutMs,
    appUrl: openrouter.appUrl || undefined,
    appTitle: openrouter.appTitle || undefined,
  }
}
