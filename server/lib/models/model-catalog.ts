import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ServerConfig } from '../config/server-config'
import type { ModelCatalog, ModelSummary } from '../../../shared/types/model'

export type { ModelCatalog, ModelSummary } from '../../../shared/types/model'
import { demoModelList } from './demo/demo-stream'
import { buildRequestHeaders, endpointUrl, labelForBaseUrl } from '../openrouter/chat-client'
import { fetchWithRetry } from '../openrouter/fetch-with-retry'
import { chatClientOptions, requiresApiKey } from './chat-endpoint'

interface UpstreamModel {
  id: string
  name?: string
  description?: string
  context_length?: number
  pricing?: { prompt?: string, completion?: string }
  supported_parameters?: string[]
  architecture?: { input_modalities?: string[] }
}

function toSummary(model: UpstreamModel, offline: boolean): ModelSummary {
  return {
    id: model.id,
    name: model.name ?? model.id,
    description: model.description,
    contextLength: model.context_length ?? null,
    pricing: model.pricing ? { prompt: model.pricing.prompt ?? '0', completion: model.pricing.completion ?? '0' } : null,
    supportsTools: model.supported_parameters?.includes('tools') ?? true,
    supportsReasoning: model.supported_parameters?.includes('reasoning') ?? false,
    acceptsImages: offline || (model.architecture?.input_modalities?.includes('image') ?? false),
    offline,
  }
}

// Cached per endpoint and key (the key only as a hash), least recently used first out: each
// user's own key has its own list, so the cache must not grow with the number of keys seen.
const MAX_CACHED_LISTS = 100
const cache = new LRUCache<string, ModelSummary[]>({ max: MAX_CACHED_LISTS })

/** Model ids an upstream list named (every list this process loaded); bounded, as ids come from outside. */
const MAX_CATALOGUED_IDS = 10_000
const cataloguedIds = new Set<string>()

/** Forgets cached lists (tests; a changed key). */
export function clearModelCatalogCache(): void {
  cache.clear()
  cataloguedIds.clear()
}

/**
 * Whether `model` is in the configured catalogue: the demo model (when on), a model a role names,
 * or one an upstream model list named. A model id a person typed is not, so it never becomes a
 * metrics label of its own.
 */
export function isCataloguedModel(config: ServerConfig, model: string): boolean {
  if (cataloguedIds.has(model)) return true
  if (config.demoModel.enabled && demoModelList().data.some(item => item.id === model)) return true
  return Object.values(config.limits.roles).some(role => role.models !== '*' && role.models.split(',').some(id => id.trim() === model))
}

async function fetchUpstreamModels(config: ServerConfig, apiKey: string | undefined): Promise<ModelSummary[]> {
  const { baseUrl } = config.openrouter
  const cacheKey = `${baseUrl}|${createHash('sha256').update(apiKey ?? '').digest('hex').slice(0, 16)}`
  const cached = cache.get(cacheKey)
  if (cached) return cached

  const label = labelForBaseUrl(baseUrl)
  const response = await fetchWithRetry(endpointUrl(baseUrl, 'models?supported_parameters=tools'), {
    headers: { ...buildRequestHeaders({ baseUrl, apiKey, label }, { appTitle: config.openrouter.appTitle }), Accept: 'application/json' },
  }, {
    label,
    policy: chatClientOptions(config).retry,
  })
  const body = await response.json() as { data?: UpstreamModel[] }
  const models = (body.data ?? [])
    .filter(model => typeof model.id === 'string')
    .map(model => toSummary(model, false))
    .filter(model => model.supportsTools)
    .sort((a, b) => a.name.localeCompare(b.name))
  cache.set(cacheKey, models, { ttl: config.openrouter.modelsCacheTtlMs })
  for (const model of models) if (cataloguedIds.size < MAX_CATALOGUED_IDS) cataloguedIds.add(model.id)
  return models
}

/**
 * The models a user can pick: the upstream's tool-capable models when a key is configured (or the
 * endpoint needs none), cached; plus the offline demo model when it is enabled, always last.
 * An unreachable upstream is reported in `error`, never thrown.
 */
export async function listModels(config: ServerConfig, userApiKey?: string): Promise<ModelCatalog> {
  const demo = config.demoModel.enabled ? demoModelList().data.map(model => toSummary(model, true)) : []
  const apiKey = userApiKey || config.openrouter.apiKey || undefined
  if (!apiKey && requiresApiKey(config.openrouter.baseUrl)) return { models: demo, source: 'demo' }
  try {
    return { models: [...await fetchUpstreamModels(config, apiKey), ...demo], source: 'upstream' }
  } catch (error) {
    return { models: demo, source: 'demo', error: `Could not load models: ${(error as Error).message}` }
  }
}
