/** "Continue this conversation": copies the snapshot into a new conversation of the session user's (within their quotas). */
export default defineEventHandler(async (event) => {
  const viewer = await requireSessionUser(event)
  setResponseStatus(event, 201)
  return usePersonal().shares.copy(getRouterParam(event, 'token') ?? '', viewer)
})
