import { z } from 'zod'

const body = z.object({
  /** `{ "<key>": "<value>" }`; an empty value removes that key. */
  values: z.record(z.string().max(40), z.string().max(8_192)).refine(values => Object.keys(values).length <= 10, 'at most 10 keys at once'),
}).strict()

/** Sets a credential for everyone (used by anyone who has not set their own; sealed, never shown again). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const { values } = await readJsonBody(event, body)
  return { services: await useToolSources().credentials.setForEveryone(getRouterParam(event, 'service') ?? '', values) }
})
