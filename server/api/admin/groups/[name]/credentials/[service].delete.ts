/** Removes group `:name`'s values of a credential. Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const group = await useAccounts().groups.named(getRouterParam(event, 'name', { decode: true }) ?? '')
  if (!group) throw createError({ statusCode: 404, statusMessage: 'No such group.' })
  return { services: await useToolSources().credentials.removeForGroup(group.name, getRouterParam(event, 'service') ?? '') }
})
