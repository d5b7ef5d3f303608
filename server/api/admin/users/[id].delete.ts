/** Deletes an account with its conversations, workflows and tokens, stopping its running jobs (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const deleted = await useAccounts().deleteAccount(getRouterParam(event, 'id') ?? '')
  if (!deleted) throw createError({ statusCode: 404, statusMessage: 'No such account.' })
  return { deleted: true }
})
