/**
 * How the events viewers got are kept in a job's run log (shared/types/job-events.ts
 * `StoredJobEvent`): each under its number and run, as it was sent (the snapshot a resumed run
 * starts with too, so a viewer replaying across a restart gets the rewind in order), except an
 * event too large to keep, kept as "omitted" (a reader replaying past one is given a snapshot of
 * now), and a workflow state replaced by a later one in the same write, kept as "superseded" (a
 * reader passes it by: the later one replaces it).
 */
import type { StoredJobEvent } from '../../../shared/types/job-events'
import { MAX_STORED_EVENT_CHARS } from '../stores/jobs/job-store'
import type { SequencedJobEvent } from './stream-events'

/** The events of one write as the store keeps them, in order. */
export function toStoredEvents(batch: readonly SequencedJobEvent[]): StoredJobEvent[] {
  let lastState = -1
  for (let index = batch.length - 1; index >= 0; index--) {
    if (batch[index]!.event.type === 'workflow-state') {
      lastState = index
      break
    }
  }
  return batch.map((item, index) => {
    const stored: StoredJobEvent = { seq: item.seq, attempt: item.attempt }
    if (item.event.type === 'workflow-state' && index < lastState) stored.superseded = true
    else if (item.frame.length <= MAX_STORED_EVENT_CHARS) stored.event = item.event
    else stored.omitted = item.event.type
    return stored
  })
}
