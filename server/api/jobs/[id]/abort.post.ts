/** Stops a job (its upstream request and running tools). Idempotent. */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  const aborted = await useBackgroundJobs().abortJob(job.id)
  const current = await useBackgroundJobs().store.getJob(job.id)
  return { jobId: job.id, aborted, status: current?.status ?? job.status }
})
