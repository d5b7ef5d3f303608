import { groupBody, groupName } from '../../../../shared/schemas/limits'

/**
 * Creates or changes group `:name` (admins only): `{ description?, limits? }`, limits as a role's
 * (`models`, `dailyTokens`, …; a field left out gives nothing beyond the role's). A member gets
 * the most generous of their role's and their groups' limits.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const name = groupName.safeParse(getRouterParam(event, 'name', { decode: true }) ?? '')
  if (!name.success) throw createError({ statusCode: 400, statusMessage: 'Bad group name', message: `The group name ${name.error.issues[0]!.message}.` })
  const body = await readJsonBody(event, groupBody, { allowEmpty: true })
  return useAccounts().groups.save(name.data, body)
})
