/**
 * `generate_image` wired to the runtime: the thread store keeps the images, the job's person's key
 * (sealed in the job) or the server's asks the operator's image model, the daily budget counts
 * what each costs, and the offline demo draws when there is no key or the chat is with the demo.
 */
import type { ServerConfig } from '../config/server-config'
import type { AppStores } from '../stores'
import type { BackgroundJobManager } from '../jobs/manager'
import { registerServerTool } from '../tools/registry'
import { ImageTool, type ImageMaker } from '../images/image-tool'
import { chatClientOptions, DEMO_MODEL_ID, MissingApiKeyError, resolveChatEndpoint } from '../models/chat-endpoint'

/** Registers `generate_image` when images are on (`images.enabled`). */
export function registerImages(config: ServerConfig, stores: Pick<AppStores, 'threads' | 'jobs' | 'limiterFor'>, jobs: BackgroundJobManager): void {
  if (!config.images.enabled) return
  const makerFor = async (jobId: string): Promise<ImageMaker> => {
    const job = await stores.jobs.getJob(jobId)
    if (config.images.model === DEMO_MODEL_ID || job?.request?.model === DEMO_MODEL_ID) return 'demo'
    try {
      return { endpoint: resolveChatEndpoint(config.images.model, config, job ? jobs.apiKeyOf(job) : undefined), model: config.images.model }
    } catch (error) {
      if (MissingApiKeyError.isInstance(error) && config.demoModel.enabled) return 'demo'
      throw error
    }
  }
  const tool = new ImageTool(config.images, {
    threads: stores.threads,
    quotas: config.limits,
    limiterFor: stores.limiterFor,
    client: chatClientOptions(config),
    makerFor,
    budget: { left: userId => jobs.remainingBudget(userId), record: (userId, spent) => jobs.recordUsage(userId, spent) },
  }).module()
  registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
}
