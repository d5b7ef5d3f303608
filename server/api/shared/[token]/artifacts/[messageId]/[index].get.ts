import { htmlArtifactAt } from '../../../../../../shared/artifacts'

/** An HTML page an answer of a shared snapshot wrote, served in a sandbox of its own like the owner's (see the conversation's route). */
export default defineEventHandler(async (event) => {
  const viewer = await requireSessionUser(event, { optional: true, newGuest: false })
  const shared = await usePersonal().shares.view(getRouterParam(event, 'token') ?? '', viewer)
  const message = shared.messages.find(item => item.id === getRouterParam(event, 'messageId') && item.role === 'assistant')
  if (!message) throw createError({ statusCode: 404, statusMessage: 'No such answer', message: 'This shared conversation has no such answer.' })
  const page = htmlArtifactAt(message.content, getRouterParam(event, 'index'))
  if (!page) throw createError({ statusCode: 404, statusMessage: 'No such page', message: 'This answer has no such page.' })
  return serveFile(event, { name: `${page.title}.html`, bytes: new TextEncoder().encode(page.code) }, { kind: 'artifact', network: getQuery(event).network === '1' })
})
