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
import type { ToolErrorCode, ToolExecutionContext, ToolExecutionResult, ToolRuntime } from './tool-types'

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

/**
 * Executes a registered tool with the model's JSON arguments. Never throws and never rejects:
 * unknown tools, client-only tools, invalid arguments, timeouts, aborts, handler errors and
 * unusable results all come back as `error` (with `errorCode`) so the caller can feed them to the model.
 */
export async function executeServerTool(
  toolName: string,
  argsJson: string | null | undefined,
  context: Partial<ToolExecutionContext> = {},
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

  const timeoutMs = tool.timeoutMs ?? defaultToolTimeoutMs()
  const outcome = await runWithDeadline(
    signal => tool.handler(args, {
      userId: context.userId ?? '',
      threadId: context.threadId ?? '',
      jobId: context.jobId ?? '',
      signal,
    }),
    { timeoutMs, signal: context.signal },
  )

  switch (outcome.status) {
    case 'timeout':
      return failure(toolName, 'timeout', `Tool "${toolName}" timed out after ${timeoutMs} ms.`, startedAt, tool.runtime)
    case 'aborted':
      return failure(toolName, 'aborted', `Tool "${toolName}" was aborted before it finished.`, startedAt, tool.runtime)
    case 'rejected':
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
