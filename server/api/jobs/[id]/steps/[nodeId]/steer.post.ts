/** A message (`{ content }`) to a running agent step of the session user's workflow run, read at the step's next round boundary (see `jobInteractions`). */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  setResponseStatus(event, 202)
  return jobInteractions(event, job).steerStep(getRouterParam(event, 'nodeId') ?? '')
})
