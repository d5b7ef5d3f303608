import type { KnowledgeBaseView } from '../../../shared/types/knowledge'
import { knowledgeBaseSchema } from '../../../shared/schemas/knowledge'

/** Renames a knowledge base, changes its description or who it is shared with (its owner only). */
export default defineEventHandler(async (event): Promise<KnowledgeBaseView> => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, knowledgeBaseSchema)
  return usePersonal().knowledge.update(user.id, getRouterParam(event, 'base') ?? '', body)
})
