/**
 * Lines up a message (`{ content, model, tools? }`) to start when the running answer ends well:
 * `{ items }` (201). 409 with 20 waiting; when nothing runs and the last answer ended well, it starts at once.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const queued = await threadQueue(event, thread).add()
  setResponseStatus(event, 201)
  return queued
})
