/**
 * What job runs report for monitoring, as they happen: runs started and ended, model requests,
 * tool calls started and ended, waits for people opened and ended, frames sent to viewers. The metrics (server/lib/metrics) implement it; runs and the live
 * hub only call it, so they know nothing of how it is counted or exported. Every method is cheap
 * and never throws into a run.
 */
import type { ToolCallStatus } from '../tools/run-tool-calls'
import type { JobType } from '../../../shared/types/job'
import type { InputRequestKind, InputRequestStatus } from '../../../shared/types/input-request'
import type { JobStreamEvent } from '../../../shared/types/job-events'
import type { Usage } from '../../../shared/types/chat'
import type { Role } from '../../../shared/types/account'
import type { JobRunOutcome } from './run/end'

export interface JobObserver {
  /** A run began (`resumed`: a job interrupted by a restart or taken over from another instance). */
  runStarted(type: JobType, resumed: boolean): void
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
  /** How fast a model request wrote: completion tokens per second from its first text to its last. */
  outputSpeed(model: string, tokensPerSecond: number): void
  /** What one model request of a job of a user of `role` used, as the upstream reported it. */
  modelUsage(model: string, usage: Usage, role: Role): void
  /** A model request of a run ended, however it ended (`error`: the upstream error's kind, when it failed). */
  modelRequestEnded(model: string, error?: string): void
  /** A run opened a wait for a person (not one it found again after a restart). */
  waitOpened(kind: InputRequestKind): void
  /** A wait the run waited on ended: answered, expired, or cancelled (the job was stopped). */
  waitEnded(kind: InputRequestKind, status: Exclude<InputRequestStatus, 'open'>): void
  /** One event went out to `viewers` live viewers of a job. */
  frameSent(type: JobStreamEvent['type'], viewers: number): void
}

/** Reports nowhere (tests, and a server without metrics). */
export const UNOBSERVED: JobObserver = {
  runStarted() {},
  toolStarted() {},
  toolEnded() {},
  runEnded() {},
  textBatchSent() {},
  firstToken() {},
  outputSpeed() {},
  modelUsage() {},
  modelRequestEnded() {},
  waitOpened() {},
  waitEnded() {},
  frameSent() {},
}
