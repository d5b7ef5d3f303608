import { z } from 'zod'
import type { KnowledgeDocumentView } from '../../../../../shared/types/knowledge'

const query = z.object({ from: z.coerce.number().int().min(0).max(10_000_000).default(0) })

/** A document of a knowledge base the session user may read, with its passages from `?from=` (50 at a time). */
export default defineEventHandler(async (event): Promise<KnowledgeDocumentView> => {
  const user = await requireSessionUser(event)
  const parsed = query.safeParse(getQuery(event))
  if (!parsed.success) throw createError({ statusCode: 400, statusMessage: 'from: must be a passage number (0 or more).' })
  return usePersonal().knowledge.read(user.id, getRouterParam(event, 'base') ?? '', getRouterParam(event, 'document') ?? '', parsed.data.from)
})
