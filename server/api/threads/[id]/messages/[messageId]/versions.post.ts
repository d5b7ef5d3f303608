/**
 * A new version of a message (`{ userMessage, assistantMessage, jobId }`): a question edited and
 * sent again (`content`, the model and tools as for a new message), or the same question answered
 * again (no `content`). Earlier versions stay, one switch away (`PUT /api/threads/:id/branch`).
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const sent = await sendThreadMessage(event, thread, getRouterParam(event, 'messageId'))
  setResponseStatus(event, 202)
  return sent
})
