import { z } from 'zod'
import { MAX_THREAD_TITLE } from '../../../shared/limits'

const bodySchema = z.object({ title: z.string().trim().max(MAX_THREAD_TITLE).optional() }).strict()

/** Starts a new, empty conversation. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readValidatedBody(event, raw => bodySchema.safeParse(raw ?? {}))
  if (!body.success) throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}` })
  setResponseStatus(event, 201)
  return useThreadStore().createThread({ userId: user.id, title: body.data.title })
})
