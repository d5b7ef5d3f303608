import { feedbackSchema } from '../../../../../../shared/schemas/personal'

/** Rates an answer 👍 or 👎, with an optional reason; rating again changes it. 400 for a question or an answer still being written. */
export default defineEventHandler(async (event) => {
  const thread = await requireOwned(event, 'thread', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, feedbackSchema)
  return usePersonal().feedback.rate(thread, getRouterParam(event, 'messageId') ?? '', body)
})
