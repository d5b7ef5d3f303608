/** An account's groups (by an admin, and from its identity provider) and its limits with where each comes from (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const view = await useAccounts().groupView(getRouterParam(event, 'id') ?? '')
  if (!view) throw createError({ statusCode: 404, statusMessage: 'No such account.' })
  return view
})
