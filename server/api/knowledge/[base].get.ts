import type { KnowledgeBaseView, KnowledgeDocument } from '../../../shared/types/knowledge'

/** A knowledge base the session user may read, with its documents (404 for one that is not theirs to see). */
export default defineEventHandler(async (event): Promise<{ base: KnowledgeBaseView, documents: KnowledgeDocument[] }> => {
  const user = await requireSessionUser(event)
  return usePersonal().knowledge.documents(user.id, getRouterParam(event, 'base') ?? '')
})
