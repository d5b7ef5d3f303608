/** Deletes a document of a knowledge base with its passages (edit access). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  await usePersonal().knowledge.removeDocument(user.id, getRouterParam(event, 'base') ?? '', getRouterParam(event, 'document') ?? '')
  setResponseStatus(event, 204)
  return null
})
