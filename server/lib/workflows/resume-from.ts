/**
 * "Resume from here" on a run that failed, was rejected or stopped: a new run of the same
 * definition, inputs and prompt whose steps before the chosen one keep their outputs (as after a
 * restart), while the chosen step and every step after it run again. Nothing is paid twice for the
 * steps kept.
 */
import type { WorkflowDefinition, WorkflowState } from '../../../shared/types/workflow'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Why a run cannot be resumed from a step: 400 (the step) or 409 (the run). */
export class ResumeFromError extends DomainError {
  override name = 'ResumeFromError'
  constructor(readonly statusCode: 400 | 409, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: this.statusCode === 400 ? 'No such step to resume from' : 'Run cannot be resumed', message: this.message }
  }
}

/** `from` and every step reachable from it along the edges. */
function stepsFrom(definition: WorkflowDefinition, from: string): Set<string> {
  const reached = new Set([from])
  const queue = [from]
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const edge of definition.edges) {
      if (edge.from === node && !reached.has(edge.to)) {
        reached.add(edge.to)
        queue.push(edge.to)
      }
    }
  }
  return reached
}

/**
 * The state a new run resuming `state` from step `from` starts with: the finished steps that are
 * not `from` or after it, with their outputs; everything else to run. Throws `ResumeFromError`
 * for a step the workflow lacks, the start, or a run that did not end in a way to resume.
 */
export function resumeStateFrom(definition: WorkflowDefinition, state: WorkflowState | undefined, status: string, from: string): WorkflowState {
  if (!['error', 'rejected', 'aborted'].includes(status)) throw new ResumeFromError(409, `Only a run that failed, was rejected or was stopped can be resumed; this one is ${status === 'streaming' ? 'still running' : status}. Run it again instead.`)
  if (!state) throw new ResumeFromError(409, 'This run kept no step states to resume from; run it again instead.')
  const node = definition.nodes.find(item => item.id === from)
  if (!node) throw new ResumeFromError(400, `This workflow has no step "${from.slice(0, 64)}"; name one of ${definition.nodes.map(item => item.id).join(', ')}.`)
  if (node.kind === 'start') throw new ResumeFromError(400, 'Resuming from the start is running it again: use Run again.')
  const rerun = stepsFrom(definition, from)
  const kept = Object.entries(state.nodeStates).filter(([id, step]) => !rerun.has(id) && step.status === 'completed')
  return {
    workflowId: state.workflowId,
    workflowName: state.workflowName,
    // A kept step costs the new run nothing: its usage stays with the run that paid for it.
    nodeStates: Object.fromEntries(kept.map(([id, { usage: _paidBefore, ...step }]) => [id, { ...step, toolCalls: step.toolCalls?.map(call => ({ ...call })) }])),
    executionOrder: state.executionOrder.filter(id => kept.some(([keptId]) => keptId === id)),
    currentNodeId: null,
    failedNodeId: null,
    startsRecorded: true,
  }
}
