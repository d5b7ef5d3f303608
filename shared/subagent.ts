/**
 * Subagents (the `task` tool): a child job whose id follows from its parent's job and the tool
 * call that asked for it, so a parent resumed after a crash finds the child it had started (never
 * a second one), and a page showing the parent's tool call can watch the child live.
 */

/** The id of the child job that tool call `toolCallId` of job `parentJobId` starts (`[\w-]`, at most 100 characters). */
export function subagentJobId(parentJobId: string, toolCallId: string): string {
  return `${parentJobId}-task-${toolCallId.replace(/[^\w-]/g, '_').slice(0, 58)}`
}

/** The name of the tool that starts subagents. */
export const SUBAGENT_TOOL = 'task'
