/**
 * The numbered events of one live run of a job. Each event gets the id `<epoch>-<seq>` and is
 * serialised once; the most recent ones (up to a byte budget) are kept so a viewer reconnecting
 * with `Last-Event-ID` gets exactly what it missed.
 */
import { randomBytes } from 'node:crypto'
import { formatEventId, formatSseFrame, type JobStreamEvent, type SequencedJobEvent } from './stream-events'

/** One run's event numbering and its byte-bounded replay buffer. */
export class ReplayLog {
  /** Names this run; ids from another run (or process) never replay. */
  readonly epoch = randomBytes(6).toString('hex')
  private seq = 0
  private readonly events: SequencedJobEvent[] = []
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  /** The sequence number of the latest event (0 before the first). */
  get lastSeq(): number {
    return this.seq
  }

  /** Numbers and frames `event`, and keeps it for replay. */
  append(event: JobStreamEvent): SequencedJobEvent {
    const seq = ++this.seq
    const id = formatEventId(this.epoch, seq)
    const sequenced: SequencedJobEvent = { id, seq, event, frame: formatSseFrame(id, event) }
    this.events.push(sequenced)
    this.bytes += sequenced.frame.length
    while (this.bytes > this.maxBytes && this.events.length > 1) this.bytes -= this.events.shift()!.frame.length
    return sequenced
  }

  /** `event` under the id of the latest event, without keeping it (a snapshot of "now"). */
  current(event: JobStreamEvent): SequencedJobEvent {
    const id = formatEventId(this.epoch, this.seq)
    return { id, seq: this.seq, event, frame: formatSseFrame(id, event) }
  }

  /** The events after `lastEventId`, or undefined when they are not all here (another run, or dropped). */
  after(lastEventId: { epoch: string, seq: number }): SequencedJobEvent[] | undefined {
    if (lastEventId.epoch !== this.epoch || lastEventId.seq > this.seq) return undefined
    if (lastEventId.seq === this.seq) return []
    const first = this.events[0]
    if (!first || first.seq > lastEventId.seq + 1) return undefined
    return this.events.filter(item => item.seq > lastEventId.seq)
  }
}
