import { getHeader, getQuery, type H3Event } from 'h3'
import type { BackgroundJobManager } from '../jobs/manager'
import { toPublicJob } from '../jobs/public-job'
import { formatEventId, formatSseFrame, frameBytes, parseEventId, type JobStreamEvent } from '../jobs/stream-events'
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
 * the missed events), then live deltas, tool calls and the final status, then the end of the
 * stream. With `abortOnClose`, a client that leaves before the end aborts the job.
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

  const subscription = jobs.hub.subscribe(job.id, (sequenced) => {
    connection.write(frameBytes(sequenced))
    if (sequenced.event.type === 'status') connection.close()
  }, lastEventId, () => {
    // The server is stopping: tell the client to come back soon, then end the stream.
    connection.write('retry: 2000\n\n')
    connection.close()
  })

  if (!subscription) {
    // Not live in this process: it has finished (or is about to be resumed). Send what is stored.
    const stored = (await jobs.store.getJob(job.id)) ?? job
    const epoch = `s${stored.updatedAt.toString(36)}`
    const snapshot: JobStreamEvent = { type: 'snapshot', job: toPublicJob(stored) }
    connection.write(formatSseFrame(formatEventId(epoch, 0), snapshot))
    if (stored.status !== 'streaming') {
      const status: JobStreamEvent = { type: 'status', status: stored.status, finishReason: stored.finishReason, error: stored.error, usage: stored.usage, completedAt: stored.completedAt, contentLength: stored.content.length }
      connection.write(formatSseFrame(formatEventId(epoch, 1), status))
    } else {
      connection.write('retry: 1000\n\n')
    }
    connection.close()
    return connection.send()
  }

  connection.onClose(() => {
    subscription.dispose()
    if (options.abortOnClose && jobs.isRunning(job.id)) void jobs.abortJob(job.id)
  })
  for (const item of subscription.replay ?? [subscription.snapshot!]) connection.write(frameBytes(item))
  if (subscription.finished) {
    if (!subscription.replay && subscription.statusEvent) connection.write(frameBytes(subscription.statusEvent))
    connection.close()
  }
  return connection.send()
}
