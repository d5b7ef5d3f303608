/** Deletes a run from the history (409 while it runs: stop it first). */
export default defineEventHandler(async (event) => {
  const run = await requireOwned(event, 'workflowRun', getRouterParam(event, 'jobId'))
  if (run.status === 'streaming') throw createError({ statusCode: 409, statusMessage: 'This run is still running; stop it first, then delete it.' })
  await useBackgroundJobs().workflowRuns.delete(run.jobId)
  return { deleted: true }
})
