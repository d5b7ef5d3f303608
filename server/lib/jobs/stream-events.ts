/**
 * The SSE framing of job stream events (shapes in shared/types/job-events.ts). Every event has an id
 * `<epoch>-<seq>`: the epoch names one live run of a job in one server process, the sequence
 * counts its events, so a reconnect with `Last-Event-ID` can be replayed exactly or, when that run
 * is gone, answered with a fresh snapshot.
 */
import type { JobStreamEvent } from '../../../shared/types/job-events'

export type { JobStreamEvent } from '../../../shared/types/job-events'

/** An event with its id and its SSE frame, serialised once however many viewers get it. */
export interface SequencedJobEvent {
  id: string
  seq: number
  event: JobStreamEvent
  frame: string
  /** `frame` as bytes, made on first use by `frameBytes` and then shared by every viewer. */
  bytes?: Buffer
}

/**
 * The frame as one Buffer shared by every viewer: a stream given a string copies it into a Buffer
 * of its own, so a large snapshot sent to many viewers would be held once per viewer.
 */
export function frameBytes(sequenced: SequencedJobEvent): Buffer {
  return sequenced.bytes ??= Buffer.from(sequenced.frame, 'utf8')
}

/** The SSE frame for one event (`id`, `event`, one `data` line of JSON). */
export function formatSseFrame(id: string, event: JobStreamEvent): string {
  const { type, ...data } = event
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`
}

/** Builds the id of event `seq` of live run `epoch`. */
export function formatEventId(epoch: string, seq: number): string {
  return `${epoch}-${seq}`
}

/** Reads a `Last-Event-ID`; undefined when absent or not ours. */
export function parseEventId(value: string | undefined | null): { epoch: string, seq: number } | undefined {
  const match = value?.trim().match(/^([a-z0-9]{4,32})-(\d{1,15})$/)
  return match ? { epoch: match[1]!, seq: Number(match[2]) } : undefined
}
