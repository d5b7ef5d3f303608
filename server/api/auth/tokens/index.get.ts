/** The signed-in account's API tokens (never their secrets). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (user.role === 'guest') return []
  return useAccounts().tokens.list(user.id)
})
