/**
 * Knowledge bases in the runtime: the bases (their documents' files kept in the workspace store),
 * the background indexer each instance runs, and `search_knowledge`, which searches the bases its
 * conversation has attached (the thread's settings, read at each call, so attaching one mid-chat
 * counts from the next call). Off (no store on this backend, or `NUXT_KNOWLEDGE_ENABLED=false`):
 * the routes answer 404 saying so, and the tool is never offered.
 */
import type { ServerConfig } from '../config/server-config'
import type { AppStores } from '../stores'
import { KnowledgeBases, knowledgeLimitsOf } from '../knowledge/knowledge-bases'
import type { RoleLimits } from '../../../shared/types/limits'
import { KnowledgeIndexer } from '../knowledge/indexer'
import { createEmbedder } from '../knowledge/embeddings'
import { PassageSearch } from '../knowledge/passage-search'
import { createReranker } from '../knowledge/rerank'
import { searchKnowledgeTool } from '../knowledge/knowledge-tool'
import { registerServerTool } from '../tools/registry'
import { guardedPageFetcher, webRequestLimiter } from '../tools/web/web-tools'

export interface RuntimeKnowledge {
  knowledge: KnowledgeBases
  indexer: KnowledgeIndexer
  /** The knowledge bases a conversation of `userId` has attached (none for another person's, or a run's). */
  basesOf: (userId: string, threadId: string) => Promise<readonly string[]>
}

/** What the knowledge bases need of the rest of the runtime. */
export interface KnowledgeParts {
  groupsOf: (userId: string) => Promise<readonly string[]>
  /** A base owner's limits (their role's, or more from their groups): what they may keep is among them. */
  ownerLimits: (ownerId: string) => Promise<RoleLimits>
  /** Why a person may not reach the internet (the tool policy on `capability:internet_access`), or undefined. */
  internetDenial: (userId: string) => Promise<string | undefined>
  logger: { warn: (message: string, ...rest: unknown[]) => void, info: (message: string, ...rest: unknown[]) => void }
}

export function createKnowledge(config: ServerConfig, stores: Pick<AppStores, 'knowledge' | 'workspaces' | 'threads' | 'limiterFor'>, parts: KnowledgeParts): RuntimeKnowledge {
  const { groupsOf, logger } = parts
  const settings = config.knowledge
  const enabled = settings.enabled
  const store = stores.knowledge
  let indexer: KnowledgeIndexer | undefined
  // Web pages come through web_fetch's guard, counted with the person's web requests.
  const pages = config.tools.web.fetch ? { fetch: guardedPageFetcher(config.tools.web, webRequestLimiter(config.tools.web, stores.limiterFor)), denial: parts.internetDenial } : undefined
  // Searching by meaning too, where the operator names an embedding model (its endpoint and key default to OpenRouter's).
  const embedder = settings.embeddingsModel
    ? createEmbedder({ baseUrl: settings.embeddingsBaseUrl || config.openrouter.baseUrl, apiKey: settings.embeddingsApiKey || config.openrouter.apiKey, model: settings.embeddingsModel, batch: settings.embeddingsBatch, timeoutMs: settings.embeddingsTimeoutMs })
    : undefined
  const reranker = settings.rerankModel
    ? createReranker({ baseUrl: settings.rerankBaseUrl || settings.embeddingsBaseUrl || config.openrouter.baseUrl, apiKey: settings.rerankApiKey || settings.embeddingsApiKey || config.openrouter.apiKey, model: settings.rerankModel, timeoutMs: settings.rerankTimeoutMs })
    : undefined
  const search = new PassageSearch(store, embedder, message => logger.warn(message), reranker ? { reranker, candidates: settings.rerankCandidates } : undefined)
  const knowledge = new KnowledgeBases(store, stores.workspaces, { ...settings, enabled, perOwner: async ownerId => knowledgeLimitsOf(await parts.ownerLimits(ownerId)) }, groupsOf, () => indexer?.nudge(), { pages, search })
  indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), { ...settings, leaseMs: settings.indexLeaseMs, embedder, passagesRefusal: (document, count) => knowledge.passagesRefusal(document, count) }, logger)
  const basesOf = async (userId: string, threadId: string) => {
    if (!enabled) return []
    const thread = await stores.threads.getThread(threadId)
    return thread?.userId === userId ? thread.settings?.knowledgeBaseIds ?? [] : []
  }
  if (enabled) {
    const tool = searchKnowledgeTool(knowledge, basesOf)
    registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
  }
  return { knowledge, indexer, basesOf }
}
