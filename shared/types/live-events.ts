/**
 * The browser's one live connection (`GET /api/events`, server-sent events) and how its
 * subscriptions change (`POST /api/events/:streamId`). One connection carries every job the
 * browser's tabs watch, each event tagged with its job and its id in that job's run log, and the
 * tool list's changes, so a browser holds one connection however many tabs and jobs it has open.
 */
import type { JobStreamEvent } from './job-events'

/** First on every connection: the stream's id (for changing what it carries) and the tools' version. */
export interface LiveReadyFrame { streamId: string, tools: number }

/** One event of a watched job: `id` is its `<seq>.<attempt>` in the job's run log. */
export interface LiveJobFrame { jobId: string, id: string, event: JobStreamEvent }

/** A watched job this connection will not carry (unknown, or not the person's): 404 like its own stream. */
export interface LiveGoneFrame { jobId: string, status: 404 }

/** What a `POST /api/events/:streamId` changes: jobs to start carrying (from the id the browser has) and to stop. */
export interface LiveEventsChange {
  watch?: Array<{ jobId: string, lastEventId?: string }>
  unwatch?: string[]
}
