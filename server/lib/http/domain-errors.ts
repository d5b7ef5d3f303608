/**
 * The app's own errors as HTTP answers a person can act on: each says what happened and what to
 * do, with the status a client can branch on and `Retry-After` where waiting helps. Used by
 * routes that catch (`throwHttpError`) and by the error handler for errors thrown anywhere else.
 */
import { createError, setResponseHeader, type H3Event } from 'h3'
import { AuthError } from '../auth/auth-errors'
import { BudgetExceededError, BudgetHeldError } from '../jobs/admission/budget'
import { JobCapacityError } from '../jobs/admission/caps'
import { RateLimitError } from '../jobs/admission/start-rate'
import { WorkflowCostError } from '../workflows/model-calls'
import { MissingApiKeyError } from '../models/chat-endpoint'
import { StoreBusyError } from '../stores/sqlite/busy'
import { StorageQuotaError } from '../stores/quotas'
import { McpAdminError } from '../tools/mcp/admin-servers'
import { ToolPolicyInputError } from '../tools/policy/tool-policy'
import { CredentialInputError } from '../tools/credentials/vault'
import { McpOAuthFlowError } from '../tools/mcp/oauth/authorizations'
import { JobInputError } from '../jobs/waits/job-inputs'
import { ClientToolError } from '../tools/client-tools'
import { MessageVersionError } from '../threads/versions'
import { AttachmentError } from '../threads/attachments'

/** How one domain error is answered. */
export interface HttpAnswer {
  statusCode: number
  statusMessage: string
  message: string
  data?: Record<string, unknown>
  retryAfterSeconds?: number
}

const AUTH_STATUS_MESSAGES: Record<number, string> = { 401: 'Sign-in required', 403: 'Not allowed', 409: 'Conflict', 429: 'Too many attempts' }
const INPUT_STATUS_MESSAGES: Record<number, string> = { 400: 'Answer does not fit', 404: 'No such request', 409: 'Already settled', 410: 'Request expired' }
const MCP_STATUS_MESSAGES: Record<number, string> = { 400: 'Invalid MCP server', 403: 'Not allowed', 404: 'No such MCP server', 409: 'Conflict' }

/** The answer for `error` when it is one of the app's own, else undefined. */
export function httpAnswerFor(error: unknown): HttpAnswer | undefined {
  if (MissingApiKeyError.isInstance(error)) return { statusCode: 400, statusMessage: 'API key needed', message: error.message }
  if (JobCapacityError.isInstance(error)) {
    return { statusCode: error.scope === 'server' ? 503 : 429, statusMessage: error.scope === 'server' ? 'Server busy' : 'Too many running answers', message: error.message, data: { scope: error.scope, limit: error.limit }, retryAfterSeconds: error.retryAfterSeconds }
  }
  if (BudgetHeldError.isInstance(error)) return { statusCode: 429, statusMessage: 'Budget held by answers in progress', message: error.message, data: { budget: error.budget, limit: error.limit }, retryAfterSeconds: error.retryAfterSeconds }
  if (BudgetExceededError.isInstance(error)) return { statusCode: 402, statusMessage: 'Daily budget used up', message: error.message, data: { budget: error.budget, limit: error.limit, resetsAt: error.resetsAt }, retryAfterSeconds: error.retryAfterSeconds }
  if (WorkflowCostError.isInstance(error)) return { statusCode: 400, statusMessage: 'Workflow too costly', message: error.message, data: { modelCalls: error.calls, limit: error.limit } }
  if (RateLimitError.isInstance(error)) return { statusCode: 429, statusMessage: 'Too many starts', message: error.message, data: { scope: error.scope, limit: error.limit }, retryAfterSeconds: error.retryAfterSeconds }
  if (StorageQuotaError.isInstance(error)) return { statusCode: 409, statusMessage: 'Storage limit reached', message: error.message, data: { quota: error.kind, limit: error.limit } }
  if (AuthError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: AUTH_STATUS_MESSAGES[error.statusCode] ?? 'Refused', message: error.message, data: { reason: error.refusal }, retryAfterSeconds: error.retryAfterSeconds }
  if (McpAdminError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: MCP_STATUS_MESSAGES[error.statusCode]!, message: error.message }
  if (McpOAuthFlowError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: error.statusCode === 502 ? 'Authorization server problem' : error.statusCode === 404 ? 'No such MCP server' : 'Authorisation refused', message: error.message }
  if (JobInputError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: INPUT_STATUS_MESSAGES[error.statusCode]!, message: error.message, data: error.request ? { request: error.request } : undefined }
  if (AttachmentError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: error.statusCode === 413 ? 'File too large' : error.statusCode === 415 ? 'File type not accepted' : 'Invalid file', message: error.message }
  if (MessageVersionError.isInstance(error)) return { statusCode: error.statusCode, statusMessage: error.statusCode === 404 ? 'No such message' : 'Cannot make that version', message: error.message }
  if (ClientToolError.isInstance(error)) return { statusCode: 400, statusMessage: 'Invalid browser tool', message: error.message }
  if (CredentialInputError.isInstance(error)) return { statusCode: 400, statusMessage: 'Invalid credential', message: error.message }
  if (ToolPolicyInputError.isInstance(error)) return { statusCode: 400, statusMessage: 'Invalid tool policy', message: error.message }
  if (StoreBusyError.isInstance(error)) return { statusCode: 503, statusMessage: 'Storage busy', message: error.message, retryAfterSeconds: error.retryAfterSeconds }
  return undefined
}

/** Throws the HTTP form of a domain error (setting `Retry-After`); rethrows anything else. */
export function throwHttpError(event: H3Event, error: unknown): never {
  const answer = httpAnswerFor(error)
  if (!answer) throw error
  if (answer.retryAfterSeconds !== undefined) setResponseHeader(event, 'Retry-After', answer.retryAfterSeconds)
  throw createError({ statusCode: answer.statusCode, statusMessage: answer.statusMessage, message: answer.message, data: answer.data })
}
