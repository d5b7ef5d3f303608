import { z } from 'zod'

const bodySchema = z.object({
  content: z.string().trim().min(1, 'write a message').max(100_000),
  model: z.string().trim().min(1, 'choose a model').max(200),
  tools: z.array(z.string().max(64)).max(100).optional(),
}).strict()

/**
 * Sends a message: stores it and starts the answer as a background job (`{ userMessage,
 * assistantMessage, jobId }`); watch it at `/api/jobs/:jobId/stream`.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema)
  setResponseStatus(event, 202)
  return sendThreadMessage(event, thread, body)
})
