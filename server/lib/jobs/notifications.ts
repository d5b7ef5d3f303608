/**
 * The note left for a user when their job ends while no tab is watching it; the UI shows it as
 * an unread notification (and a browser notification) on the next visit.
 */
import type { JobStore } from '../stores/jobs/job-store'
import type { BackgroundJob, JobNotification } from '../../../shared/types/job'
import type { JobTerminal } from './live-hub'
import { localize } from '../i18n/server-text'

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
  // Written in the language of the person who started it (the note is read, and pushed, later).
  const say = (key: string) => localize(job.request?.locale ?? 'en', { key: `notes.${key}`, params: { name: workflow?.definition.name ?? '' } })
  const scheduled = workflow?.startedVia === 'schedule'
  if (terminal.status === 'complete') {
    if (scheduled) return null
    return store.notifications.add({ ...base, kind: 'job-complete', title: say(workflow ? 'runFinished' : 'answerReady'), body: preview(content) || say('finished') })
  }
  if (terminal.status === 'error') {
    return store.notifications.add({ ...base, kind: 'job-error', title: say(workflow ? (scheduled ? 'scheduledRunFailed' : 'runFailed') : 'answerFailed'), body: preview(terminal.error?.message ?? say('jobFailed')) })
  }
  return store.notifications.add({ ...base, kind: 'job-aborted', title: say(workflow ? (scheduled ? 'scheduledRunStopped' : 'runStopped') : 'answerStopped'), body: preview(content) || say('stoppedBefore') })
}
