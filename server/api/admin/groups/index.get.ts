/** The groups (admins only): each with its description and the limits it gives its members. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return { groups: await useAccounts().groups.list() }
})
