import { listModels } from '../lib/models/model-catalog'

/**
 * Lists the models a user can pick. A user's own OpenRouter key travels in `X-OpenRouter-Key`;
 * it is used for this request only and never stored or logged.
 */
export default defineEventHandler(async (event) => {
  const userApiKey = getHeader(event, 'x-openrouter-key')?.trim() || undefined
  return await listModels(useServerConfig(event), userApiKey)
})
