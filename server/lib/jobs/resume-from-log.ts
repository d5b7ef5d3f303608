/**
 * What a viewer resuming after event `<seq>.<attempt>` missed, read from the job's stored run log
 * (server/lib/jobs/run-log.ts): exactly the events after it, or why it must start from a snapshot
 * instead (shared/types/job-events.ts `JobSnapshotEvent.reason`): the store never kept that event
 * (`diverged`), no longer keeps what follows (`compacted`), or a run started again since from its
 * checkpoint with a snapshot too large to keep (`resumed`: the reader gets one of now).
 */
import type { JobEventId, JobSnapshotEvent, StoredJobEvent } from '../../../shared/types/job-events'
import type { JobStore } from '../stores/jobs/job-store'

/** Events one resume reads from the store at most; a viewer further behind gets a snapshot (`compacted`). */
export const MAX_REPLAYED_FROM_STORE = 2_000

/** What the store can give a resuming viewer. */
export type StoredReplay =
  | { kind: 'events', events: StoredJobEvent[] }
  | { kind: 'snapshot', reason: NonNullable<JobSnapshotEvent['reason']> }

/** The run that wrote event `seq` of the job's log, when the store still keeps it (none for 0). */
export async function attemptOfEvent(store: Pick<JobStore, 'readJobEvents'>, jobId: string, seq: number): Promise<number | undefined> {
  if (seq <= 0) return undefined
  const kept = (await store.readJobEvents(jobId, seq, 1))?.events[0]
  return kept?.seq === seq ? kept.attempt : undefined
}

/**
 * The stored events after `id` up to number `upTo` (all kept ones without), checked to continue
 * exactly from `id`: the event it names must be the one the store kept under that number.
 */
export async function readMissedEvents(store: Pick<JobStore, 'readJobEvents'>, jobId: string, id: JobEventId, upTo = Number.POSITIVE_INFINITY): Promise<StoredReplay> {
  const wanted = Number.isFinite(upTo) ? upTo - id.seq : MAX_REPLAYED_FROM_STORE
  if (wanted > MAX_REPLAYED_FROM_STORE) return { kind: 'snapshot', reason: 'compacted' }
  if (wanted <= 0) return wanted === 0 ? { kind: 'events', events: [] } : { kind: 'snapshot', reason: 'diverged' }
  // The event the id names comes too, to check it is the one kept.
  const read = await store.readJobEvents(jobId, Math.max(1, id.seq), wanted + 1)
  if (!read) return { kind: 'snapshot', reason: 'unknown' }
  if (id.seq > read.lastSeq) return { kind: 'snapshot', reason: 'diverged' }
  let events = read.events
  if (id.seq > 0) {
    const named = events[0]
    if (!named || named.seq !== id.seq) return { kind: 'snapshot', reason: 'compacted' }
    if (named.attempt !== id.attempt) return { kind: 'snapshot', reason: 'diverged' }
    events = events.slice(1)
  }
  events = events.filter(event => event.seq <= upTo)
  let expected = id.seq + 1
  for (const event of events) {
    if (event.seq !== expected++) return { kind: 'snapshot', reason: 'compacted' }
    if (!event.event && !event.superseded) return { kind: 'snapshot', reason: event.omitted === 'snapshot' ? 'resumed' : 'compacted' }
  }
  const last = Number.isFinite(upTo) ? upTo : Math.min(read.lastSeq, id.seq + wanted)
  if (expected - 1 < last) return { kind: 'snapshot', reason: 'compacted' }
  return { kind: 'events', events: events.filter(event => event.event) }
}
