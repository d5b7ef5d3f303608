/** A tool call as viewers see it (the `ActiveToolCall` of jobs and workflow steps). */
import type { ToolCallRecord } from '../../tools/run-tool-calls'
import type { ActiveToolCall } from '../../../../shared/types/job'

/** Tool results are shown to viewers up to this length (the model gets them whole). */
const DISPLAY_RESULT_CHARS = 2_000

/** A tool call as viewers see it: running (from its start) or finished (from its record). */
export function toolCallView(call: ToolCallRecord | { id: string, name: string, arguments: string, startedAt: number }, round: number): ActiveToolCall {
  if (!('status' in call)) return { id: call.id, name: call.name, arguments: call.arguments, round, status: 'running', startedAt: call.startedAt }
  const view: ActiveToolCall = {
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    round,
    status: call.status === 'completed' ? 'completed' : 'error',
    startedAt: call.startedAt,
    finishedAt: call.finishedAt,
    executionTimeMs: call.executionTimeMs,
    result: call.result.length > DISPLAY_RESULT_CHARS ? `${call.result.slice(0, DISPLAY_RESULT_CHARS)}…` : call.result,
  }
  if (call.timedOut) view.timedOut = true
  if (call.error !== undefined) view.error = call.error
  return view
}
