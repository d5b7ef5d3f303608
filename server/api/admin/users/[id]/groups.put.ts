import { memberGroupsBody } from '../../../../../shared/schemas/limits'

/** Puts an account in `{ groups: [...] }` (replacing the groups an admin gave it before; admins only); 400 for a group that does not exist. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const body = await readJsonBody(event, memberGroupsBody)
  const accounts = useAccounts()
  const id = getRouterParam(event, 'id') ?? ''
  if (!await accounts.getAccount(id)) throw createError({ statusCode: 404, statusMessage: 'No such account.' })
  await accounts.groups.setManual(id, body.groups)
  return accounts.groupView(id)
})
