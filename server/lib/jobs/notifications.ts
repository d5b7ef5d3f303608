/**
 * The note left for a user when their job ends while no tab is watching it; the UI shows it as
 * an unread notification (and a browser notification) on the next visit.
 */
import type { JobStore } from '../stores/jobs/job-store'
import type { BackgroundJob, JobNotification } from '../../../shared/types/job'
import type { JobTerminal } from './live-hub'

const PREVIEW_CHARS = 140

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat
}

/**
 * Records the notification for a job that ended unwatched (a workflow run says its workflow's
 * name); a scheduled run that completed leaves none (a schedule would fill the list), one that
 * failed or was stopped does.
 */
export async function notifyUnwatchedJob(store: JobStore, job: BackgroundJob, terminal: JobTerminal, content: string): Promise<JobNotification | null> {
  const base = { userId: job.userId, jobId: job.id, threadId: job.threadId, now: terminal.completedAt }
  const workflow = job.request?.workflow
  const what = workflow ? `${workflow.startedVia === 'schedule' ? 'The scheduled run' : 'The run'} of “${workflow.definition.name}”` : undefined
  if (terminal.status === 'complete') {
    if (workflow?.startedVia === 'schedule') return null
    return store.addNotification({ ...base, kind: 'job-complete', title: what ? `${what} finished` : 'Your answer is ready', body: preview(content) || 'The answer finished.' })
  }
  if (terminal.status === 'error') {
    return store.addNotification({ ...base, kind: 'job-error', title: what ? `${what} failed` : 'Your answer failed', body: preview(terminal.error?.message ?? 'The job failed.') })
  }
  return store.addNotification({ ...base, kind: 'job-aborted', title: what ? `${what} was stopped` : 'Your answer was stopped', body: preview(content) || 'The job was stopped before it answered.' })
}
