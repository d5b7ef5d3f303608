import type { KnowledgeBaseView } from '../../../shared/types/knowledge'
import { knowledgeBaseSchema } from '../../../shared/schemas/knowledge'

/** Creates a knowledge base of the session user's (guests: 403). */
export default defineEventHandler(async (event): Promise<KnowledgeBaseView> => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Knowledge bases are for accounts: sign up to keep documents.' })
  const body = await readJsonBody(event, knowledgeBaseSchema)
  setResponseStatus(event, 201)
  return usePersonal().knowledge.create(user.id, body)
})
