import { z } from 'zod'
import { MAX_THREAD_TITLE } from '../../../shared/limits'

const bodySchema = z.object({ title: z.string().trim().min(1, 'give the conversation a name').max(MAX_THREAD_TITLE) }).strict()

/** Renames a conversation. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema)
  await useThreadStore().renameThread(thread.id, body.title)
  return useThreadStore().getThread(thread.id)
})
