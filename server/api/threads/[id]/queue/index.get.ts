/** The conversation's queued messages (sent while an answer ran), first to go first: `{ items }`. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return threadQueue(event, thread).list()
})
