import { z } from 'zod'

const querySchema = z.object({
  q: z.string().max(1_000, 'search for at most 1,000 characters'),
  limit: z.coerce.number().int().min(1).max(50).optional(),
  /** Only conversations in this folder. */
  folder: z.string().max(100).optional(),
})

/**
 * The session user's conversations whose title or messages hold every word of `?q=` (word
 * prefixes; case and accents ignored; SQLite FTS5, a Convex search index, or a scan in memory),
 * one hit per conversation with a snippet around the words; `?folder=<id>` searches one folder.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: 'Invalid search', message: `Invalid search: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  return { hits: await useThreadStore().searchThreads(user.id, query.data.q, { limit: query.data.limit, folderId: query.data.folder }) }
})
