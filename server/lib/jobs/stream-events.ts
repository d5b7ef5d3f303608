/**
 * The SSE framing of job stream events (shapes in shared/types/job-events.ts). Every event has an id
 * `<seq>.<attempt>`: `seq` numbers the job's events across restarts and instances (the run log
 * keeps them), `attempt` names the run that wrote it, so a reconnect with `Last-Event-ID` is
 * replayed exactly, from memory or from the store, and an id of an event the store never kept
 * (written just before a crash) is recognised as such.
 */
import type { JobEventId, JobStreamEvent } from '../../../shared/types/job-events'

export type { JobEventId, JobStreamEvent } from '../../../shared/types/job-events'

/** An event with its id and its SSE frame, serialised once however many viewers get it. */
export interface SequencedJobEvent {
  id: string
  seq: number
  attempt: number
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

/** The id of event `seq` written by run `attempt`. */
export function formatEventId(id: JobEventId): string {
  return `${id.seq}.${id.attempt}`
}

/** Reads a `Last-Event-ID`; undefined when absent or not ours (ids of older versions included). */
export function parseEventId(value: string | undefined | null): JobEventId | undefined {
  // Anchored, no nested quantifiers: linear on any input.
  const match = value?.trim().match(/^(\d{1,15})\.(\d{1,9})$/)
  return match ? { seq: Number(match[1]), attempt: Number(match[2]) } : undefined
}

/** The frame of `event` with its id. */
export function sequenced(event: JobStreamEvent, id: JobEventId): SequencedJobEvent {
  const text = formatEventId(id)
  return { id: text, seq: id.seq, attempt: id.attempt, event, frame: formatSseFrame(text, event) }
}
