import type { KnowledgeBaseView } from '../../../shared/types/knowledge'

/** The session user's knowledge bases and those shared with their groups, by name. */
export default defineEventHandler(async (event): Promise<KnowledgeBaseView[]> => {
  const user = await requireSessionUser(event)
  return usePersonal().knowledge.list(user.id)
})
