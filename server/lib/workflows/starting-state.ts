/**
 * The state a run starts from: fresh, or after a restart (or "resume from here") the steps that
 * completed keep their outputs and decisions, the rest wait again, and the steps that were under
 * way keep their checkpoints (an agent step continues from its last stored round) and their
 * retries (the count of failed tries, when the next is due).
 */
import type { WorkflowNodeState, WorkflowState } from '../../../shared/types/workflow'
import type { WorkflowRunParams } from './run-contract'

/** The state a resumed run starts from: completed nodes kept, the rest pending, checkpoints of steps under way. */
export function startingState(params: WorkflowRunParams, interrupted: ReadonlySet<string>): WorkflowState {
  const previous = params.resume?.nodeStates ?? {}
  const state: WorkflowState = {
    workflowId: params.workflowId,
    workflowName: params.workflow.name,
    nodeStates: Object.fromEntries(params.workflow.nodes.map(node => [node.id, previous[node.id]?.status === 'completed' ? previous[node.id]! : interrupted.has(node.id) ? retryOf(previous[node.id]!) : { status: 'pending' as const }])),
    executionOrder: (params.resume?.executionOrder ?? []).filter(id => previous[id]?.status === 'completed'),
    currentNodeId: null,
    failedNodeId: null,
    startsRecorded: true,
  }
  const steps = Object.entries(params.resume?.agentSteps ?? {}).filter(([id]) => interrupted.has(id))
  if (steps.length > 0) state.agentSteps = Object.fromEntries(steps)
  return state
}

/** A step under way waits again, keeping its failed tries and when the next is due (a restart waits out the rest). */
function retryOf(step: WorkflowNodeState): WorkflowNodeState {
  return { status: 'pending', ...(step.attempts ? { attempts: step.attempts } : {}), ...(step.retryAt !== undefined ? { retryAt: step.retryAt, error: step.error } : {}) }
}
