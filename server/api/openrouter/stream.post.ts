/**
 * Starts an answer, with its tool rounds, as a server-side job. With `_background: true` it
 * answers `{ jobId, status }` at once and the job runs to the end whether or not anyone watches
 * (`GET /api/jobs/:id/stream`). Without it, the response is the job's event stream and closing
 * it aborts the job. A user's own key travels in `X-OpenRouter-Key`.
 */
export default defineEventHandler(async (event) => {
  const request = await readStreamRequest(event)
  if (request._background && !useServerConfig(event).backgroundJobs.enabled) {
    throw createError({ statusCode: 400, statusMessage: 'Background jobs are switched off on this server (NUXT_BACKGROUND_JOBS_ENABLED=false); send the request without _background to stream the answer.' })
  }
  const job = await startChatJobForRequest(event, request)
  if (request._background) {
    setResponseStatus(event, 202)
    return { jobId: job.id, status: job.status }
  }
  return serveJobStream(event, job, { abortOnClose: true })
})
