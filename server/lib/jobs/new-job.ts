/** What a new chat or workflow job is stored with, from what its starter asked for. */
import type { SecretBox } from '../security/secret-box'
import type { JobPrincipal } from './admission/principal'
import type { CreateJobInput } from '../stores/jobs/job-store'
import type { ChatJobRequest } from '../../../shared/types/job'
import type { AppLocale } from '../../../shared/locales'
import type { WorkflowDefinition, WorkflowState } from '../../../shared/types/workflow'
import type { WorkflowRunStart } from '../../../shared/types/workflow-run'

/** A new workflow run. */
export interface StartWorkflowJobInput {
  /** Who runs it (the workflow's owner), as admission sees them. */
  principal: JobPrincipal
  workflowId: string
  /** The saved version that runs (recorded with the run). */
  version?: number
  definition: WorkflowDefinition
  prompt: string
  /** Its named inputs, checked (workflows/run-inputs.ts). */
  inputs?: Record<string, string>
  /** A run resuming another from one of its steps, and the state it starts from (workflows/resume-from.ts). */
  resume?: { jobId: string, nodeId: string, state: WorkflowState }
  /** How it was started (recorded with the run; default `form`). */
  startedVia?: WorkflowRunStart
  /** "Run again": the run whose inputs it runs with again. */
  rerunOf?: string
  /** A failure handler's run: the failed run it handles. */
  failureOf?: string
  userApiKey?: string
  /** The job's id when the caller chose it (a webhook call's retries share one); the store refuses a second job with it. */
  jobId?: string
}

/** A new chat job. */
export interface StartChatJobInput {
  /** Who asks, as admission sees them. */
  principal: JobPrincipal
  threadId?: string
  messageId?: string
  /** The job's id, when it must be this one (a subagent's, from its parent's call). */
  jobId?: string
  request: ChatJobRequest
  /** The user's own OpenRouter key; stored only encrypted, and only while the job runs. */
  userApiKey?: string
}

/** The record of a new chat job; the user's key is stored only sealed. */
export function newChatJob(input: StartChatJobInput, secretBox: SecretBox): CreateJobInput {
  return {
    ...(input.jobId ? { id: input.jobId } : {}),
    userId: input.principal.userId,
    threadId: input.threadId ?? crypto.randomUUID(),
    messageId: input.messageId ?? crypto.randomUUID(),
    type: 'chat',
    model: input.request.model,
    request: withLocale(input.request, input.principal.locale),
    apiKeyCiphertext: input.userApiKey ? secretBox.seal(input.userApiKey) : undefined,
  }
}

/**
 * The record of a new workflow run: the definition as it is now, so a resumed run uses the same,
 * and the role's output clamp (`maxOutputTokens`, 0 for none) as the agents' `max_tokens`.
 */
export function newWorkflowJob(input: StartWorkflowJobInput, secretBox: SecretBox, maxOutputTokens = 0): CreateJobInput {
  return {
    ...(input.jobId ? { id: input.jobId } : {}),
    userId: input.principal.userId,
    threadId: `workflow:${input.workflowId}`,
    messageId: crypto.randomUUID(),
    type: 'workflow',
    model: 'workflow',
    request: withLocale({ model: input.definition.defaultModel, messages: [{ role: 'user', content: input.prompt }], fields: maxOutputTokens > 0 ? { max_tokens: maxOutputTokens } : {}, workflow: { workflowId: input.workflowId, ...(input.version ? { version: input.version } : {}), prompt: input.prompt, ...(input.inputs && Object.keys(input.inputs).length > 0 ? { inputs: input.inputs } : {}), definition: input.definition, startedVia: input.startedVia ?? (input.resume ? 'resume' : 'form'), ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}), ...(input.failureOf ? { failureOf: input.failureOf } : {}), ...(input.resume ? { resumedFrom: { jobId: input.resume.jobId, nodeId: input.resume.nodeId }, resumeState: input.resume.state } : {}) } }, input.principal.locale),
    apiKeyCiphertext: input.userApiKey ? secretBox.seal(input.userApiKey) : undefined,
  }
}

/** `request` with the starter's language, when one is known and it is not English (the default). */
function withLocale(request: ChatJobRequest, locale: AppLocale | undefined): ChatJobRequest {
  return locale && locale !== 'en' ? { ...request, locale } : request
}
