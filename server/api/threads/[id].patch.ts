import { z } from 'zod'
import { MAX_THREAD_TITLE } from '../../../shared/limits'

const bodySchema = z.object({ title: z.string().trim().min(1, 'give the conversation a name').max(MAX_THREAD_TITLE) }).strict()

/** Renames a conversation. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwnedThread(event, getRouterParam(event, 'id'))
  const body = await readValidatedBody(event, raw => bodySchema.safeParse(raw ?? {}))
  if (!body.success) throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}` })
  await useThreadStore().renameThread(thread.id, body.data.title)
  return useThreadStore().getThread(thread.id)
})
