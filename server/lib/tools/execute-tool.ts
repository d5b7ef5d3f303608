/**
 * Runs one registered tool: checks the runtime and the arguments (JSON Schema, then zod), runs
 * the handler under its deadline, and serialises the result. Never throws.
 */
import type { z } from 'zod'
import { defaultToolTimeoutMs, getToolEntry } from './registry'
import { runWithDeadline } from './run-with-deadline'
import { parseToolArguments } from './tool-arguments'
import { serializeToolResult } from './tool-result'
import { formatValidationErrors } from './tool-schema'
import type { ToolCredentials, ToolErrorCode, ToolExecutionContext, ToolExecutionResult, ToolRuntime } from './tool-types'
import { failSpan, inSpan } from '../tracing'

function failure(
  toolName: string,
  errorCode: ToolErrorCode,
  error: string,
  startedAt: number,
  runtime?: ToolRuntime,
): ToolExecutionResult {
  return {
    result: null,
    toolName,
    timedOut: errorCode === 'timeout',
    error,
    errorCode,
    runtime,
    executionTimeMs: Math.round(performance.now() - startedAt),
  }
}

function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || thrown.name
  return typeof thrown === 'string' ? thrown : JSON.stringify(thrown) ?? String(thrown)
}

function formatZodIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .map(issue => (issue.path.length ? `field "${issue.path.join('.')}" ${issue.message}` : issue.message))
    .join('; ')
}

/** A call made without credentials (a script, a test): nothing is set. */
const NO_CREDENTIALS: ToolCredentials = { get: () => undefined, has: () => false }

/** The needs (`service` or `service/key`) that `credentials` does not meet. */
export function missingCredentials(needs: readonly string[], credentials: ToolCredentials): string[] {
  return needs.filter((need) => {
    const [service, key] = need.split('/') as [string, string | undefined]
    return key === undefined ? !credentials.has(service) : credentials.get(service, key) === undefined
  })
}

/** Where a person sets a credential (Settings, credentials section). */
export const CREDENTIALS_SETTINGS_PATH = '/settings#credentials'

/** The tool error for credentials not set: what is missing and where to set it, for the model and the person. */
export function missingCredentialsMessage(toolName: string, missing: readonly string[]): string {
  const list = missing.map(need => `"${need}"`).join(', ')
  return `Tool "${toolName}" needs the credential${missing.length === 1 ? '' : 's'} ${list}, which ${missing.length === 1 ? 'is' : 'are'} not set. Tell the user to add ${missing.length === 1 ? 'it' : 'them'} in Settings → Credentials (${CREDENTIALS_SETTINGS_PATH}) and ask again; do not retry before then.`
}

/**
 * Executes a registered tool with the model's JSON arguments. Never throws and never rejects:
 * unknown tools, client-only tools, invalid arguments, timeouts, aborts, handler errors and
 * unusable results all come back as `error` (with `errorCode`) so the caller can feed them to the
 * model. A tool whose declared credentials are not set ends with `credentials_missing` unrun.
 * Each call is a span (`execute_tool {name}`), active while the tool runs, so what it calls (an
 * MCP server over HTTP) carries its trace.
 */
export function executeServerTool(
  toolName: string,
  argsJson: string | null | undefined,
  context: Partial<ToolExecutionContext> = {},
): Promise<ToolExecutionResult> {
  return inSpan(`execute_tool ${toolName}`, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': toolName }, async (span) => {
    const outcome = await executeRegisteredTool(toolName, argsJson, context)
    if (outcome.error !== undefined) failSpan(span, outcome.errorCode ?? 'error')
    return outcome
  })
}

async function executeRegisteredTool(
  toolName: string,
  argsJson: string | null | undefined,
  context: Partial<ToolExecutionContext>,
): Promise<ToolExecutionResult> {
  const startedAt = performance.now()
  const entry = getToolEntry(toolName)
  if (!entry) {
    return failure(toolName, 'not_registered', `Tool "${toolName}" is not registered on server.`, startedAt)
  }
  const { tool } = entry
  if (tool.runtime === 'client') {
    return failure(toolName, 'client_only', `Tool "${toolName}" is client-only and cannot run on the server.`, startedAt, tool.runtime)
  }
  if (!tool.enabled) {
    return failure(toolName, 'disabled', `Tool "${toolName}" is disabled.`, startedAt, tool.runtime)
  }
  const unavailable = tool.unavailable?.()
  if (unavailable !== undefined) {
    return failure(toolName, 'unavailable', unavailable, startedAt, tool.runtime)
  }

  const parsed = parseToolArguments(argsJson)
  if (!parsed.ok) {
    return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${parsed.error}.`, startedAt, tool.runtime)
  }
  let args: Record<string, unknown> = parsed.args
  if (!entry.validate(args)) {
    const reason = formatValidationErrors(entry.validate.errors)
    return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${reason}.`, startedAt, tool.runtime)
  }
  if (entry.zodSchema) {
    const checked = entry.zodSchema.safeParse(args)
    if (!checked.success) {
      const reason = formatZodIssues(checked.error.issues)
      return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${reason}.`, startedAt, tool.runtime)
    }
    args = checked.data as Record<string, unknown>
  }

  const credentials = context.credentials ?? NO_CREDENTIALS
  const missing = missingCredentials(tool.requiresCredentials, credentials)
  if (missing.length > 0) {
    return failure(toolName, 'credentials_missing', missingCredentialsMessage(toolName, missing), startedAt, tool.runtime)
  }

  const timeoutMs = tool.timeoutMs ?? defaultToolTimeoutMs()
  const outcome = await runWithDeadline(
    signal => tool.handler(args, {
      userId: context.userId ?? '',
      threadId: context.threadId ?? '',
      jobId: context.jobId ?? '',
      signal,
      credentials,
      ...(context.askUser ? { askUser: context.askUser } : {}),
      ...(context.toolCallId ? { toolCallId: context.toolCallId } : {}),
      ...(context.workspaceId ? { workspaceId: context.workspaceId } : {}),
      ...(context.knowledgeBaseIds ? { knowledgeBaseIds: context.knowledgeBaseIds } : {}),
      ...(context.holdRoundDeadline ? { holdRoundDeadline: context.holdRoundDeadline } : {}),
      ...(context.availableTools ? { availableTools: context.availableTools } : {}),
    }),
    { timeoutMs, signal: context.signal },
  )

  switch (outcome.status) {
    case 'timeout':
      return failure(toolName, 'timeout', `Tool "${toolName}" timed out after ${timeoutMs} ms.`, startedAt, tool.runtime)
    case 'aborted':
      return failure(toolName, 'aborted', `Tool "${toolName}" was aborted before it finished.`, startedAt, tool.runtime)
    case 'rejected':
      if ((outcome.error as Error | null)?.name === 'ToolUnavailableError') return failure(toolName, 'unavailable', describeThrown(outcome.error), startedAt, tool.runtime)
      return failure(toolName, 'execution_failed', `Tool "${toolName}" failed: ${describeThrown(outcome.error)}`, startedAt, tool.runtime)
    case 'fulfilled': {
      const serialized = serializeToolResult(outcome.value)
      if (!serialized.ok) {
        return failure(toolName, 'invalid_result', `Tool "${toolName}" returned an unusable result: ${serialized.error}.`, startedAt, tool.runtime)
      }
      return {
        result: serialized.result,
        toolName,
        timedOut: false,
        runtime: tool.runtime,
        executionTimeMs: Math.round(performance.now() - startedAt),
      }
    }
  }
}
