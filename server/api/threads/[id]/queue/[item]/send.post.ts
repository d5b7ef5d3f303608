/**
 * "Send now": while an answer runs, the message is handed to it and the model reads it at its next
 * round boundary (`{ steered: true }`); otherwise it is sent at once (`{ sent }`, 202).
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const result = await threadQueue(event, thread).sendNow(getRouterParam(event, 'item') ?? '')
  setResponseStatus(event, 202)
  return result
})
