import type { BackgroundJobManager } from '../../lib/background-jobs/job-manager'
import type { JobListener } from '../../lib/background-jobs/live-hub'

let manager: BackgroundJobManager | undefined

/** Installs the process's job manager (server/plugins/30.background-jobs.ts does this at start-up). */
export function setBackgroundJobManager(next: BackgroundJobManager | undefined): void {
  manager = next
}

/** The job runtime of this server process. */
export function useBackgroundJobs(): BackgroundJobManager {
  if (!manager) throw createError({ statusCode: 503, statusMessage: 'The job service is starting; try again in a moment.' })
  return manager
}

/**
 * Attaches `listener` to a job's live events (deltas, tool calls, status). Returns an idempotent
 * disposer, or undefined when the job is not live in this process.
 */
export function registerJobStream(jobId: string, listener: JobListener): (() => void) | undefined {
  return useBackgroundJobs().hub.subscribe(jobId, listener)?.dispose
}
