/** Lists the enabled tools (what a model may be offered, with their sources) and each MCP server's state. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  return listToolSummaries()
})
