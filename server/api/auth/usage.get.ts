/** The session user's usage today (UTC) against their role's budgets, and the role's other limits. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return useAccounts().usage.today(user)
})
