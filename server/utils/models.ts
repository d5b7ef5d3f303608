import type { H3Event } from 'h3'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { listModels, type ModelCatalog } from '../lib/models/model-catalog'

/** The models this request's user can pick (their own key from `X-OpenRouter-Key`, used for this request only). */
export function listModelsForRequest(event: H3Event): Promise<ModelCatalog> {
  return listModels(useServerConfig(event), userApiKeyOf(event))
}
