import { z } from 'zod'

const body = z.object({
  /** `{ "<key>": "<value>" }`; an empty value removes that key. */
  values: z.record(z.string().max(40), z.string().max(8_192)).refine(values => Object.keys(values).length <= 10, 'at most 10 keys at once'),
}).strict()

/** Saves the person's own values for a credential service (sealed in the store, never shown again). Accounts only, not guests. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') throw createError({ statusCode: 403, statusMessage: 'Sign in to save credentials', message: 'Guests cannot save credentials: create an account or sign in first.' })
  const { values } = await readJsonBody(event, body)
  return { services: await useToolSources().credentials.set(user.id, getRouterParam(event, 'service') ?? '', values) }
})
