import { getHeader, getQuery, type H3Event } from 'h3'
import type { BackgroundJobManager } from '../jobs/manager'
import { toPublicJob } from '../jobs/public-job'
import { frameBytes, parseEventId, sequenced, type JobEventId, type SequencedJobEvent } from '../jobs/stream-events'
import type { JobSubscription } from '../jobs/live-hub'
import { readMissedEvents } from '../jobs/resume-from-log'
import type { JobStore } from '../stores/jobs/job-store'
import type { JobSnapshotEvent } from '../../../shared/types/job-events'
import { SseConnection } from './sse-connection'
import type { StreamSlots } from './stream-slots'
import { OverCapacityError } from './over-capacity'
import { throwHttpError } from './domain-errors'
import type { BackgroundJob } from '../../../shared/types/job'

/** Unsent bytes one viewer may fall behind before it is disconnected (it resumes on reconnect). */
const MAX_QUEUED_BYTES = 1024 * 1024
const KEEP_ALIVE_MS = 15_000

/**
 * Serves a job as server-sent events: a snapshot (or, on a reconnect with `Last-Event-ID`, exactly
 * the missed events, from memory and from the stored run log, across restarts), then live deltas,
 * tool calls and the final status, then the end of the stream. With `abortOnClose`, a client that
 * leaves before the end aborts the job.
 */
export async function serveJobStream(event: H3Event, jobs: BackgroundJobManager, job: BackgroundJob, options: { abortOnClose?: boolean, slots?: StreamSlots, address?: string } = {}): Promise<void> {
  let release: (() => void) | undefined
  try {
    release = options.slots?.acquire(job.userId, job.id, options.address)
  } catch (error) {
    // The job was started for this stream (`abortOnClose`): nobody will watch it, so stop it.
    if (OverCapacityError.isInstance(error, 'streams') && options.abortOnClose) await jobs.abortJob(job.id)
    throwHttpError(event, error)
  }
  const connection = new SseConnection(event, { maxQueuedBytes: MAX_QUEUED_BYTES, keepAliveMs: KEEP_ALIVE_MS })
  if (release) connection.onClose(release)
  const lastEventId = parseEventId(getHeader(event, 'last-event-id') ?? getQuery(event).lastEventId?.toString())
  // On a shared store, a job another instance runs is relayed into this instance's hub.
  await jobs.followRemoteJob(job)

  // Events up to `sentSeq` have gone out; live ones arriving while the store is read wait for `ready`.
  let sentSeq = -1
  let ready = false
  let ended = false
  const send = (item: SequencedJobEvent) => {
    connection.write(frameBytes(item))
    sentSeq = item.seq
    if (item.event.type === 'status') {
      ended = true
      connection.close()
    }
  }
  const subscription = jobs.hub.subscribe(job.id, (item) => {
    // A snapshot restates the job as of its id (a relay resyncing): it may share the last one sent.
    if (ready && !ended && (item.seq > sentSeq || (item.event.type === 'snapshot' && item.seq === sentSeq))) send(item)
  }, lastEventId, () => {
    // The server is stopping: tell the client to come back soon, then end the stream.
    connection.write('retry: 2000\n\n')
    connection.close()
  })

  if (!subscription) {
    await serveStored(connection, jobs.store, (await jobs.store.getJob(job.id)) ?? job, lastEventId)
    return connection.send()
  }
  connection.onClose(() => {
    subscription.dispose()
    if (options.abortOnClose && jobs.isRunning(job.id)) void jobs.abortJob(job.id)
  })
  for (const item of await missedEvents(jobs, job.id, subscription, lastEventId)) {
    if (!ended) send(item)
  }
  ready = true
  if (subscription.finished && !ended) {
    // After a snapshot (or events that stop short of it), the status closes the stream.
    if (subscription.statusEvent) send(subscription.statusEvent)
    connection.close()
  }
  return connection.send()
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
 * of a running one gets the stored events it missed (then comes back for more); anyone else the
 * stored job, and its status when it has ended.
 */
async function serveStored(connection: SseConnection, store: JobStore, stored: BackgroundJob, lastEventId: JobEventId | undefined): Promise<void> {
  const running = stored.status === 'streaming'
  const lastSeq = stored.eventSeq ?? 0
  // A finished job's status follows its last event (as the runner's hub numbered it).
  const status = () => sequenced({ type: 'status', status: stored.status, finishReason: stored.finishReason, error: stored.error, usage: stored.usage, completedAt: stored.completedAt, contentLength: stored.content.length }, { seq: lastSeq + 1, attempt: stored.resumeCount })
  let reason: JobSnapshotEvent['reason']
  if (lastEventId) {
    const missed = await readMissedEvents(store, stored.id, lastEventId)
    if (missed.kind === 'events' && (running || missed.events.at(-1)?.seq === lastSeq || lastEventId.seq === lastSeq)) {
      for (const item of missed.events) connection.write(frameBytes(sequenced(item.event!, item)))
      connection.write(running ? 'retry: 1000\n\n' : frameBytes(status()))
      connection.close()
      return
    }
    reason = missed.kind === 'snapshot' ? missed.reason : 'compacted'
  }
  // The id of the last event kept names what this snapshot shows (a log folded away: its run's number then).
  const attempt = lastSeq > 0 ? (await store.readJobEvents(stored.id, lastSeq, 1))?.events[0]?.attempt ?? stored.resumeCount : stored.resumeCount
  connection.write(frameBytes(sequenced({ type: 'snapshot', job: toPublicJob(stored), ...(reason ? { reason } : {}) }, { seq: lastSeq, attempt })))
  connection.write(running ? 'retry: 1000\n\n' : frameBytes(status()))
  connection.close()
}
