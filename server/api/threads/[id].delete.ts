/** Deletes a conversation, stopping any answer still running in it. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  await deleteThread(thread)
  return { deleted: true }
})
