/** New text for a waiting message (`{ content }`): `{ items }`; 409 once it is being sent or was handed to the answer. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return threadQueue(event, thread).edit(getRouterParam(event, 'item') ?? '')
})
