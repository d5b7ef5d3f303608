import { getHeader, getQuery, type H3Event } from 'h3'
import type { BackgroundJobManager } from '../jobs/manager'
import { frameBytes, parseEventId } from '../jobs/stream-events'
import { attachJobViewer } from './job-viewer'
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
  const detach = await attachJobViewer(jobs, job, lastEventId, {
    send: item => connection.write(frameBytes(item)),
    retryLater: () => {
      connection.write('retry: 1000\n\n')
      connection.close()
    },
    ended: () => connection.close(),
    detached: () => {
      // The server is stopping: tell the client to come back soon, then end the stream.
      connection.write('retry: 2000\n\n')
      connection.close()
    },
  })
  connection.onClose(() => {
    detach()
    if (options.abortOnClose && jobs.runs.has(job.id)) void jobs.abortJob(job.id)
  })
  return connection.send()
}
