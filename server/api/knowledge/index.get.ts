import type { KnowledgeList } from '../../../shared/types/knowledge'

/** The session user's knowledge bases and those shared with their groups (by name), and their groups to share with. */
export default defineEventHandler(async (event): Promise<KnowledgeList> => {
  const user = await requireSessionUser(event)
  return usePersonal().knowledge.list(user.id)
})
