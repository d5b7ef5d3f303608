/**
 * The numbered events of one live run of a job, as this process holds them. A run numbers its
 * events on from the last one its job's store kept (`baseSeq`), under its own `attempt`, so the ids
 * go on across restarts. The most recent events (up to a byte budget) are kept, so a viewer
 * reconnecting with `Last-Event-ID` gets exactly what it missed from memory; what is older comes
 * from the store (serve-job-stream.ts).
 */
import { sequenced as frame, type JobEventId, type JobStreamEvent, type SequencedJobEvent } from './stream-events'

/** What the log can tell a viewer resuming after an id. */
export type ReplayAnswer =
  /** Exactly the events after the id (none when it is the latest). */
  | { kind: 'events', events: SequencedJobEvent[] }
  /** The id is older than what this log holds: the store has the events up to where this log starts. */
  | { kind: 'older', from: number }
  /** The id names an event this run never sent: another run numbered it and the store never kept it. */
  | { kind: 'diverged' }

/** One run's event numbering (or a relay's copy of another instance's) and its byte-bounded replay buffer. */
export class ReplayLog {
  private seq: number
  /** The run that wrote the latest event (undefined: the base event's, unknown). */
  private lastAttempt: number | undefined
  private readonly events: SequencedJobEvent[] = []
  private bytes = 0

  /**
   * `baseSeq`: the last event its job's store kept when this run began, written by run
   * `baseAttempt` (when known); `attempt`: this run.
   */
  constructor(private readonly maxBytes: number, readonly baseSeq: number, readonly attempt: number, private readonly baseAttempt?: number) {
    this.seq = baseSeq
    this.lastAttempt = baseAttempt
  }

  /** The sequence number of the latest event (`baseSeq` before the first). */
  get lastSeq(): number {
    return this.seq
  }

  /** Numbers `event` as this run's next and keeps it for replay. */
  append(event: JobStreamEvent): SequencedJobEvent {
    return this.appendAs(event, { seq: this.seq + 1, attempt: this.attempt })
  }

  /**
   * Keeps `event` under the id another instance gave it (a relay: numbers only go up, and may skip
   * the ones its store keeps as superseded).
   */
  appendAs(event: JobStreamEvent, id: JobEventId): SequencedJobEvent {
    if (id.seq <= this.seq) throw new Error(`Event ${id.seq} does not follow ${this.seq}.`)
    const item = frame(event, id)
    this.seq = id.seq
    this.lastAttempt = id.attempt
    this.events.push(item)
    this.bytes += item.frame.length
    while (this.bytes > this.maxBytes && this.events.length > 1) this.bytes -= this.events.shift()!.frame.length
    return item
  }

  /** `event` under the id of the latest event, without keeping it (a snapshot of "now"). */
  current(event: JobStreamEvent): SequencedJobEvent {
    return frame(event, { seq: this.seq, attempt: this.lastAttempt ?? this.attempt })
  }

  /** The events after number `seq` (whichever run numbered it), or undefined when this log does not reach back to it. */
  since(seq: number): SequencedJobEvent[] | undefined {
    const firstKept = this.events[0]?.seq ?? this.seq + 1
    if (seq < firstKept - 1 || seq > this.seq) return undefined
    return this.events.filter(item => item.seq > seq)
  }

  /** The events after `id` (see `ReplayAnswer`). */
  after(id: JobEventId): ReplayAnswer {
    if (id.seq > this.seq) return { kind: 'diverged' }
    const index = this.events.findIndex(item => item.seq >= id.seq)
    const named = index >= 0 && this.events[index]!.seq === id.seq ? this.events[index] : undefined
    if (named) return named.attempt === id.attempt ? { kind: 'events', events: this.events.slice(index + 1) } : { kind: 'diverged' }
    // The last event the store kept when this run began, or "before any event" of a job with none.
    const firstKept = this.events[0]?.seq ?? this.seq + 1
    const isBase = id.seq === this.baseSeq && (id.seq === 0 || id.attempt === this.baseAttempt)
    if (isBase && firstKept === this.baseSeq + 1) return { kind: 'events', events: [...this.events] }
    // Numbered by an earlier run, dropped from memory, or skipped here: the store says, up to what memory holds.
    return { kind: 'older', from: index >= 0 ? this.events[index]!.seq : this.seq + 1 }
  }
}
