/** The MCP App page of a tool call of the session user's job: the tool's `ui://` page, in its own sandbox (see `jobInteractions`). */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  return jobInteractions(event, job).app(getRouterParam(event, 'callId') ?? '').page()
})
