import { htmlArtifactAt } from '../../../../../../../shared/artifacts'

/**
 * An HTML page an answer wrote (its artifact `index`), for its conversation's owner: served in a
 * sandbox of its own (no cookies, no app, no network unless `?network=1`), for the app's artifact
 * panel to frame.
 */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const message = await useThreadStore().getMessage(getRouterParam(event, 'messageId') ?? '')
  if (!message || message.threadId !== thread.id || message.role !== 'assistant') throw createError({ statusCode: 404, statusMessage: 'No such answer', message: 'This conversation has no such answer.' })
  const page = htmlArtifactAt(message.content, getRouterParam(event, 'index'))
  if (!page) throw createError({ statusCode: 404, statusMessage: 'No such page', message: 'This answer has no such page.' })
  return serveFile(event, { name: `${page.title}.html`, bytes: new TextEncoder().encode(page.code) }, { kind: 'artifact', network: getQuery(event).network === '1' })
})
