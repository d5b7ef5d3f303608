import type { H3Event } from 'h3'
import { isModelAllowed } from '../lib/models/model-access'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { listModels, type ModelCatalog } from '../lib/models/model-catalog'

/** The models this request's user can pick: those their role may use (their own key from `X-OpenRouter-Key`, used for this request only). */
export async function listModelsForRequest(event: H3Event): Promise<ModelCatalog> {
  const user = await requireSessionUser(event)
  const config = useServerConfig(event)
  const catalog = await listModels(config, userApiKeyOf(event))
  const { models } = await useAccounts().limits.forRole(user.role, user.id)
  return { ...catalog, models: catalog.models.filter(model => isModelAllowed(models, model.id)) }
}
