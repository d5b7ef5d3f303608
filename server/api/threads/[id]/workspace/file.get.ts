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
  const name = file.path.split('/').at(-1)!
  setResponseHeaders(event, {
    'Content-Type': download === '0' ? 'text/plain; charset=utf-8' : 'application/octet-stream',
    'Content-Length': String(file.bytes.byteLength),
    'Content-Disposition': `${download === '0' ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`,
    'Content-Security-Policy': 'default-src \'none\'; sandbox',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, no-store',
  })
  return Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength)
})
