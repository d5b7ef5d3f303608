import { z } from 'zod'

const body = z.object({
  /** `{ "<key>": "<value>" }`; an empty value removes that key. */
  values: z.record(z.string().max(40), z.string().max(8_192)).refine(values => Object.keys(values).length <= 10, 'at most 10 keys at once'),
}).strict()

/** Sets a credential for group `:name` (used by its members who have not set their own; sealed, never shown again). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const group = await useAccounts().groups.named(getRouterParam(event, 'name', { decode: true }) ?? '')
  if (!group) throw createError({ statusCode: 404, statusMessage: 'No such group.' })
  const { values } = await readJsonBody(event, body)
  return { services: await useToolSources().credentials.setForGroup(group.name, getRouterParam(event, 'service') ?? '', values) }
})
