/** Takes a waiting message out of the queue: `{ items }`; 409 once it is being sent. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return threadQueue(event, thread).remove(getRouterParam(event, 'item') ?? '')
})
