/** Takes back the rating of an answer. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  return usePersonal().feedback.rate(thread, getRouterParam(event, 'messageId') ?? '', null)
})
