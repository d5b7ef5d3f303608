import { z } from 'zod'

const bodySchema = z.object({ messageId: z.string().min(1, 'name the version to show').max(100) }).strict()

/** Shows another version: the branch through `messageId` becomes the one on view (`{ thread, messages }`; 404 when the thread has no such message). */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema)
  return viewThread(event, thread, body.messageId)
})
