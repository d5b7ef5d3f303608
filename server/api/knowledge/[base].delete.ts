/** Deletes a knowledge base with its documents (its owner only). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  await usePersonal().knowledge.remove(user.id, getRouterParam(event, 'base') ?? '')
  setResponseStatus(event, 204)
  return null
})
