import { toPublicJob } from '../../utils/background-jobs/types'

/** One job in full; live progress comes from `/api/jobs/:id/stream`. */
export default defineEventHandler(async (event) => {
  const job = await requireOwnedJob(event, getRouterParam(event, 'id'))
  // A running job's stored text lags its live text by at most one flush window; prefer the live view.
  return useBackgroundJobs().hub.snapshot(job.id) ?? toPublicJob(job)
})
