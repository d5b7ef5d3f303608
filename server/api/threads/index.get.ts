import { z } from 'zod'

const querySchema = z.object({ folder: z.string().max(100).optional() })

/** The session user's conversations, pinned first, then most recently active first; `?folder=<id>` lists one folder's. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: 'folder: give a folder id.' })
  const [threads, folders] = await Promise.all([
    useThreadStore().listThreads(user.id, { folderId: query.data.folder }),
    usePersonal().settings.folders(user.id),
  ])
  // A deleted folder's conversations are in none.
  const known = new Set(folders.map(folder => folder.id))
  return { threads: threads.map(({ folderId, ...thread }) => folderId && known.has(folderId) ? { ...thread, folderId } : thread) }
})
