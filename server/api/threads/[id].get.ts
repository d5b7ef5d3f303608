/** A conversation with the messages of the branch on view (each with its versions); running answers carry their job id to attach to. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return viewThread(event, thread)
})
