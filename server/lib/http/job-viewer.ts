/**
 * One viewer of one job, wherever its events go (a job's own stream, serve-job-stream.ts, or a
 * browser's shared stream, serve-live-events.ts): first exactly the events after its
 * `Last-Event-ID` (from this process's log and, before that, the store's run log) or a snapshot,
 * then every live event in order, until the status. A job not live here (ended, or about to be
 * resumed after a restart) is served from the store.
 */
import type { BackgroundJobManager } from '../jobs/manager'
import { toPublicJob } from '../jobs/public-job'
import { sequenced, type JobEventId, type SequencedJobEvent } from '../jobs/stream-events'
import type { JobSubscription } from '../jobs/live-hub'
import { attemptOfEvent, readMissedEvents } from '../jobs/resume-from-log'
import type { JobStore } from '../stores/jobs/job-store'
import type { JobSnapshotEvent } from '../../../shared/types/job-events'
import type { BackgroundJob } from '../../../shared/types/job'

/** Where a viewer's events go. */
export interface JobViewerSink {
  /** One event, in order. After a `status`, nothing more comes. */
  send: (item: SequencedJobEvent) => void
  /** Nothing more comes from here for now: the job is not live in this process yet (it is being resumed); come back soon. */
  retryLater: () => void
  /** The job has ended and its status was sent (or the viewer caught up with an ended job). */
  ended: () => void
  /** The server is stopping: the viewer should come back soon. */
  detached: () => void
}

/**
 * Attaches a viewer of `job` holding `lastEventId`; returns the function that detaches it (none
 * needed once `ended` or `retryLater` was called).
 */
export async function attachJobViewer(jobs: BackgroundJobManager, job: BackgroundJob, lastEventId: JobEventId | undefined, sink: JobViewerSink): Promise<() => void> {
  // On a shared store, a job another instance runs is relayed into this instance's hub.
  await jobs.followRemoteJob(job)
  // Events up to `sentSeq` have gone out; live ones arriving while the store is read wait for `ready`.
  let sentSeq = -1
  let ready = false
  let done = false
  const send = (item: SequencedJobEvent) => {
    if (done) return
    sink.send(item)
    sentSeq = item.seq
    if (item.event.type === 'status') {
      done = true
      sink.ended()
    }
  }
  const subscription = jobs.hub.subscribe(job.id, (item) => {
    // A snapshot restates the job as of its id (a relay resyncing): it may share the last one sent.
    if (ready && (item.seq > sentSeq || (item.event.type === 'snapshot' && item.seq === sentSeq))) send(item)
  }, lastEventId, () => {
    done = true
    sink.detached()
  })
  if (!subscription) {
    const stored = await storedEvents(jobs.store, (await jobs.store.getJob(job.id)) ?? job, lastEventId)
    for (const item of stored.events) sink.send(item)
    if (stored.running) sink.retryLater()
    else sink.ended()
    return () => {}
  }
  for (const item of await missedEvents(jobs, job.id, subscription, lastEventId)) send(item)
  ready = true
  if (subscription.finished && !done) {
    // After a snapshot (or events that stop short of it), the status ends it.
    if (subscription.statusEvent) send(subscription.statusEvent)
    if (!done) {
      done = true
      sink.ended()
    }
  }
  return subscription.dispose
}

/**
 * What a viewer gets first from a live job: exactly the events after its `Last-Event-ID`, from this
 * process's log and, before where that starts, from the store's; else a snapshot of now, saying
 * why when it asked to resume.
 */
async function missedEvents(jobs: BackgroundJobManager, jobId: string, subscription: JobSubscription, lastEventId: JobEventId | undefined): Promise<SequencedJobEvent[]> {
  const resume = subscription.resume
  if (!lastEventId || !resume) return [subscription.snapshot()]
  if (resume.kind === 'events') return resume.events
  if (resume.kind === 'diverged') return [subscription.snapshot('diverged')]
  const stored = await readMissedEvents(jobs.store, jobId, lastEventId, resume.from - 1)
  const after = subscription.since(resume.from - 1)
  if (stored.kind === 'snapshot' || !after) return [subscription.snapshot(stored.kind === 'snapshot' ? stored.reason : 'compacted')]
  return [...stored.events.map(item => sequenced(item.event!, item)), ...after]
}

/**
 * A job not live in this process: it has finished (or is about to be resumed). A resuming viewer
 * gets the stored events it missed (of a running job, then it comes back for more; of an ended
 * one, its status after them); anyone else the stored job, and its status when it has ended.
 */
async function storedEvents(store: JobStore, stored: BackgroundJob, lastEventId: JobEventId | undefined): Promise<{ events: SequencedJobEvent[], running: boolean }> {
  const running = stored.status === 'streaming'
  const lastSeq = stored.eventSeq ?? 0
  // A finished job's status follows its last event (as the runner's hub numbered it).
  const status = () => sequenced({ type: 'status', status: stored.status, finishReason: stored.finishReason, error: stored.error, usage: stored.usage, completedAt: stored.completedAt, contentLength: stored.content.length }, { seq: lastSeq + 1, attempt: stored.resumeCount })
  let reason: JobSnapshotEvent['reason']
  if (lastEventId) {
    const missed = await readMissedEvents(store, stored.id, lastEventId)
    if (missed.kind === 'events' && (running || missed.events.at(-1)?.seq === lastSeq || lastEventId.seq === lastSeq)) {
      const events = missed.events.map(item => sequenced(item.event!, item))
      return { events: running ? events : [...events, status()], running }
    }
    reason = missed.kind === 'snapshot' ? missed.reason : 'compacted'
  }
  // The id of the last event kept names what this snapshot shows (a log folded away: its run's number then).
  const attempt = await attemptOfEvent(store, stored.id, lastSeq) ?? stored.resumeCount
  const snapshot = sequenced({ type: 'snapshot', job: toPublicJob(stored), ...(reason ? { reason } : {}) }, { seq: lastSeq, attempt })
  return { events: running ? [snapshot] : [snapshot, status()], running }
}
