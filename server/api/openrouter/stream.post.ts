/**
 * Starts an answer, with its tool rounds, as a server-side job. With `_background: true` it
 * answers `{ jobId, status }` at once and the job runs to the end whether or not anyone watches
 * (`GET /api/jobs/:id/stream`). Without it, the response is the job's event stream and closing
 * it aborts the job. A user's own key travels in `X-OpenRouter-Key`.
 */
export default defineEventHandler(async (event) => {
  const { job, request } = await startChatJobForRequest(event)
  if (request._background) {
    setResponseStatus(event, 202)
    return { jobId: job.id, status: job.status }
  }
  return serveJobStream(event, job, { abortOnClose: true })
})
