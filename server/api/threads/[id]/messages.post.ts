/**
 * Sends a message: stores it and starts the answer as a background job (`{ userMessage,
 * assistantMessage, jobId }`); watch it at `/api/jobs/:jobId/stream`.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const sent = await sendThreadMessage(event, thread)
  setResponseStatus(event, 202)
  return sent
})
