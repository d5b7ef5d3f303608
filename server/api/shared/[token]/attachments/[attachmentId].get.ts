/** A file of a shared snapshot, when the sharer included files: served like a conversation's own (an image as itself, text as plain text, sandboxed). */
export default defineEventHandler(async (event) => {
  const viewer = await requireSessionUser(event, { optional: true, newGuest: false })
  const stored = await usePersonal().shares.attachment(getRouterParam(event, 'token') ?? '', getRouterParam(event, 'attachmentId') ?? '', viewer)
  return serveFile(event, { name: stored.attachment.name, bytes: stored.bytes }, { kind: 'attachment', mediaType: stored.attachment.kind === 'image' ? stored.attachment.mediaType : undefined })
})
