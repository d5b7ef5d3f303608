/** The forms of a job the HTTP API shows: whole without secrets, or short for lists. */
import type { BackgroundJob, JobSummary, PublicJob } from '../../../shared/types/job'

/** Picks the fields the API may show. */
export function toPublicJob(job: BackgroundJob): PublicJob {
  const { request, checkpoint: _checkpoint, apiKeyCiphertext: _key, ...rest } = job
  return request?.workflow ? { ...rest, workflow: request.workflow } : rest
}

/** A short form of a job for lists. */
export function toJobSummary(job: BackgroundJob): JobSummary {
  const { content, reasoning: _reasoning, toolRounds, workflowState: _workflowState, workflow: _workflow, ...rest } = toPublicJob(job)
  return { ...rest, contentLength: content.length, toolRoundCount: toolRounds.length }
}
