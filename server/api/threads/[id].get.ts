/** A conversation with its messages; running answers carry their job id to attach to. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return { thread, messages: await useThreadStore().listMessages(thread.id) }
})
