/** Revokes one of the account's API tokens; at once, on every instance. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const revoked = await useAccounts().tokens.revoke(user.id, getRouterParam(event, 'id') ?? '')
  if (!revoked) throw createError({ statusCode: 404, statusMessage: 'No such API token. It may already be revoked.' })
  return { revoked: true }
})
