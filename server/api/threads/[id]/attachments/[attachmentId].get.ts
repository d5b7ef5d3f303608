/**
 * A file sent in a conversation, for its owner: an image as itself, a text file always as plain
 * text (never HTML, whatever it holds), sandboxed so that opened on its own it can run nothing.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const stored = await useThreadStore().readAttachment(getRouterParam(event, 'attachmentId') ?? '')
  if (!stored || stored.threadId !== thread.id) throw createError({ statusCode: 404, statusMessage: 'No such file', message: 'This conversation has no such file.' })
  const { attachment, bytes } = stored
  setResponseHeaders(event, {
    'Content-Type': attachment.kind === 'image' ? attachment.mediaType : 'text/plain; charset=utf-8',
    'Content-Length': String(bytes.length),
    'Content-Disposition': `inline; filename*=UTF-8''${encodeURIComponent(attachment.name)}`,
    'Content-Security-Policy': 'default-src \'none\'; img-src \'self\'; style-src \'unsafe-inline\'; sandbox',
    'X-Content-Type-Options': 'nosniff',
    // A file never changes under its id.
    'Cache-Control': 'private, max-age=31536000, immutable',
  })
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
})
