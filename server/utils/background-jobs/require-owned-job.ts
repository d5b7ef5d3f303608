import type { H3Event } from 'h3'
import type { BackgroundJob } from './types'

const JOB_ID = /^[\w-]{1,100}$/

/**
 * The job `jobId` if the session user owns it. Someone else's job answers 404 exactly like an
 * unknown id, so ids cannot be probed. Every job route goes through here.
 */
export async function requireOwnedJob(event: H3Event, jobId: string | undefined): Promise<BackgroundJob> {
  const user = await requireSessionUser(event)
  const job = jobId && JOB_ID.test(jobId) ? await useBackgroundJobs().provider.getJob(jobId) : null
  if (!job || job.userId !== user.id) {
    throw createError({ statusCode: 404, statusMessage: 'No such job. It may have expired, or it belongs to another session.' })
  }
  return job
}
