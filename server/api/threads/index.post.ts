import { z } from 'zod'
import { MAX_THREAD_TITLE } from '../../../shared/limits'

const bodySchema = z.object({ title: z.string().trim().max(MAX_THREAD_TITLE).optional() }).strict()

/** Starts a new, empty conversation. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  setResponseStatus(event, 201)
  return useThreadStore().createThread({ userId: user.id, title: body.title })
})
