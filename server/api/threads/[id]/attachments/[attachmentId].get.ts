/** A file sent in a conversation, for its owner (see `serveFile`). */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const stored = await useThreadStore().readAttachment(getRouterParam(event, 'attachmentId') ?? '')
  if (!stored || stored.threadId !== thread.id) throw createError({ statusCode: 404, statusMessage: 'No such file', message: 'This conversation has no such file.' })
  return serveFile(event, { name: stored.attachment.name, bytes: stored.bytes }, { kind: 'attachment', mediaType: stored.attachment.kind === 'image' ? stored.attachment.mediaType : undefined })
})
