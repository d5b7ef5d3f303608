import { z } from 'zod'

const query = z.object({ path: z.string().min(1).max(512) })

/** Deletes one workspace file of the conversation. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const parsed = await getValidatedQuery(event, raw => query.safeParse(raw))
  if (!parsed.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: z.prettifyError(parsed.error).replaceAll('\n', ' ') })
  const { path } = parsed.data
  const { workspaces } = useToolSources()
  await workspaces.delete(workspaces.forThread(thread.id), path)
  return { deleted: true }
})
