/** A call the MCP App of a tool call asks for: `{ name, arguments?, confirmed? }`, answered with the tool's result (see `mcpAppOf`). */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  return mcpAppOf(event, job, getRouterParam(event, 'callId') ?? '').callTool()
})
