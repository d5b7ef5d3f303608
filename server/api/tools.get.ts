/**
 * Lists the enabled tools as the signed-in person sees them (with their sources, and why any they
 * cannot use now is unavailable: the tool policy, or its MCP server down), each MCP server's state,
 * and (admins) the dynamic tools directory's files.
 */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  // As the tool policy sees them when their jobs run: with their groups.
  return useToolSources().catalog(await useAccounts().policyPrincipal(user.id))
})
