/** Each role's limits: the configured defaults, the admin's changes, and what applies (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return useAccounts().limits.view()
})
