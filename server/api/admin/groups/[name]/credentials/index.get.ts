/** The credential values an admin set for group `:name` (which keys are set, never the values). Admins only; 404 for no such group. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const group = await useAccounts().groups.named(getRouterParam(event, 'name', { decode: true }) ?? '')
  if (!group) throw createError({ statusCode: 404, statusMessage: 'No such group.' })
  return { services: await useToolSources().credentials.describeForGroup(group.name) }
})
