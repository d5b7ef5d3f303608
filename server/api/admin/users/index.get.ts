/** Every account (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return useAccounts().listAccounts()
})
