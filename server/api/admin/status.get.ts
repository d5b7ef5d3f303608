/** The Status page's view: the last hour of this process's main figures, jobs, the store, MCP servers, today's model use (admins only). */
export default defineEventHandler(async (event) => {
  const { status } = await useMonitoring(event, 'admin')
  setResponseHeader(event, 'Cache-Control', 'no-store')
  return status.status()
})
