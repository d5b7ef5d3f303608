/** What a new chat or workflow job is stored with, from what its starter asked for. */
import type { SecretBox } from '../security/secret-box'
import type { CreateJobInput } from '../stores/jobs/job-store'
import type { ChatJobRequest } from '../../../shared/types/job'
import type { WorkflowDefinition } from '../../../shared/types/workflow'

/** A new workflow run. */
export interface StartWorkflowJobInput {
  userId: string
  workflowId: string
  definition: WorkflowDefinition
  prompt: string
  userApiKey?: string
}

/** A new chat job. */
export interface StartChatJobInput {
  userId: string
  threadId?: string
  messageId?: string
  request: ChatJobRequest
  /** The user's own OpenRouter key; stored only encrypted, and only while the job runs. */
  userApiKey?: string
}

/** The record of a new chat job; the user's key is stored only sealed. */
export function newChatJob(input: StartChatJobInput, secretBox: SecretBox): CreateJobInput {
  return {
    userId: input.userId,
    threadId: input.threadId ?? crypto.randomUUID(),
    messageId: input.messageId ?? crypto.randomUUID(),
    type: 'chat',
    model: input.request.model,
    request: input.request,
    apiKeyCiphertext: input.userApiKey ? secretBox.seal(input.userApiKey) : undefined,
  }
}

/** The record of a new workflow run: the definition as it is now, so a resumed run uses the same. */
export function newWorkflowJob(input: StartWorkflowJobInput, secretBox: SecretBox): CreateJobInput {
  return {
    userId: input.userId,
    threadId: `workflow:${input.workflowId}`,
    messageId: crypto.randomUUID(),
    type: 'workflow',
    model: 'workflow',
    request: { model: input.definition.defaultModel, messages: [{ role: 'user', content: input.prompt }], fields: {}, workflow: { workflowId: input.workflowId, prompt: input.prompt, definition: input.definition } },
    apiKeyCiphertext: input.userApiKey ? secretBox.seal(input.userApiKey) : undefined,
  }
}

/** Every model a workflow's agent and model-router nodes call. */
export function workflowModels(definition: WorkflowDefinition): Set<string> {
  return new Set(definition.nodes.flatMap(node => node.kind === 'agent' || (node.kind === 'router' && node.mode === 'model') ? [node.model ?? definition.defaultModel] : []))
}
