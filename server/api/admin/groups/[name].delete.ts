/** Deletes group `:name` (admins only); its members keep their other groups. 404 when there is none. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  if (!await useAccounts().groups.remove(getRouterParam(event, 'name', { decode: true }) ?? '')) throw createError({ statusCode: 404, statusMessage: 'No such group.' })
  return { deleted: true }
})
