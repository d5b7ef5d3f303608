/** A call the MCP App of a tool call asks for: `{ name, arguments?, confirmed? }`, answered with the tool's result (see `jobInteractions`). */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  return jobInteractions(event, job).app(getRouterParam(event, 'callId') ?? '').callTool()
})
