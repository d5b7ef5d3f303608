/** The admin's MCP servers that would send the person's own credentials, where to, and whether the person allowed it. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { servers: await useToolSources().credentialConsents(user.id) }
})
