import { z } from 'zod'

const query = z.object({ path: z.string().min(1).max(512), download: z.enum(['1', '0']).optional() })

/**
 * One workspace file of the conversation, for its owner: shown as text (`download=0`, text files
 * only) or downloaded. Never rendered by the browser as a page: a file a model wrote is untrusted.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const parsed = await getValidatedQuery(event, raw => query.safeParse(raw))
  if (!parsed.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: z.prettifyError(parsed.error).replaceAll('\n', ' ') })
  const { path, download } = parsed.data
  const { workspaces } = useToolSources()
  const file = await workspaces.read(workspaces.forThread(thread.id), path)
  return serveFile(event, { name: file.path.split('/').at(-1)!, bytes: file.bytes }, { kind: 'written', inline: download === '0' })
})
