/** The file of a document (its current version), to download: for whoever may read its base. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const knowledge = usePersonal().knowledge
  const { document } = await knowledge.document(user.id, getRouterParam(event, 'base') ?? '', getRouterParam(event, 'document') ?? '')
  const bytes = await knowledge.readFile(document)
  if (!bytes) throw createError({ statusCode: 404, statusMessage: 'This document\'s file is gone; add it again.' })
  return serveFile(event, { name: document.name, bytes }, { kind: 'written', inline: false })
})
