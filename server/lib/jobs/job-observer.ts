/**
 * What job runs report for monitoring, as they happen: tool calls started and ended, runs ended,
 * text batches sent to viewers. The metrics (server/lib/metrics) implement it; runs and the live
 * hub only call it, so they know nothing of how it is counted or exported. Every method is cheap
 * and never throws into a run.
 */
import type { ToolCallStatus } from '../tools/run-tool-calls'
import type { JobType } from '../../../shared/types/job'
import type { Usage } from '../../../shared/types/chat'
import type { JobRunOutcome } from './run/end'

export interface JobObserver {
  /** A tool call of a run began executing. */
  toolStarted(tool: string): void
  /** That call ended: how, and how long it ran. */
  toolEnded(tool: string, status: ToolCallStatus, durationMs: number): void
  /** A run ended (or stopped to resume: `interrupted`), after `modelRounds` model requests. */
  runEnded(type: JobType, outcome: JobRunOutcome, modelRounds: number): void
  /** Text deltas sent to a job's viewers as one frame (`deltas` coalesced into it). */
  textBatchSent(deltas: number): void
  /** A model request of a run sent its first text (or reasoning) `ms` after it went out. */
  firstToken(model: string, ms: number): void
  /** What one model request used, as the upstream reported it. */
  modelUsage(model: string, usage: Usage): void
  /** A model request of a run ended, however it ended. */
  modelRequestEnded(model: string): void
}

/** Reports nowhere (tests, and a server without metrics). */
export const UNOBSERVED: JobObserver = {
  toolStarted() {},
  toolEnded() {},
  runEnded() {},
  textBatchSent() {},
  firstToken() {},
  modelUsage() {},
  modelRequestEnded() {},
}
