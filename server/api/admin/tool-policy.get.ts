/** The tool policy: the operator's rules (from the policy file, read-only here) and the admin's. Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return useToolSources().policy.view()
})
