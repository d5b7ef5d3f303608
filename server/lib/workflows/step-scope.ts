/**
 * How a nested run's steps (a loop's iterations, a workflow step's child run) are named where they
 * meet the world: approvals, tool approvals, live text and checkpoints each carry the scoped id
 * (`<loop>.<n>.<step>`, `<workflow step>.<child step>`, nested to any depth), and how such an id
 * is found again in a run's state.
 */
import type { WorkflowNodeState, WorkflowState } from '../../../shared/types/workflow'
import type { WorkflowRunDependencies } from './run-contract'

/** How a loop iteration's step is named where it meets the world (approvals, live text, child runs): `<loop>.<n>.<step>`. */
export function iterationStepId(loopId: string, index: number, stepId: string): string {
  return `${loopId}.${index}.${stepId}`
}

/** How a child run's step is named where it meets the world: `<workflow step>.<child step>` (nesting repeats both forms). */
export function childStepId(stepId: string, childId: string): string {
  return `${stepId}.${childId}`
}

/**
 * The state of the step a scoped id names (`iterationStepId`, `childStepId`, nested to any depth)
 * inside `state`: a segment of digits is a loop's iteration (step ids start with a letter).
 */
export function nestedStepState(state: WorkflowState, scopedId: string): WorkflowNodeState | undefined {
  const parts = scopedId.split('.')
  let states: Record<string, WorkflowNodeState> | undefined = state.nodeStates
  for (let at = 0; at < parts.length; at++) {
    const step: WorkflowNodeState | undefined = states?.[parts[at]!]
    if (at === parts.length - 1) return step
    const next = parts[at + 1]!
    if (/^\d+$/.test(next)) {
      states = step?.iterations?.[Number(next) - 1]?.state?.nodeStates
      at++
    } else {
      states = step?.child?.state?.nodeStates
    }
  }
  return undefined
}

/** `dependencies` for a nested run: every step id it hands out scoped with `scoped`. */
export function scopedDependencies(dependencies: WorkflowRunDependencies, scoped: (id: string) => string): WorkflowRunDependencies {
  return {
    ...dependencies,
    runAgent: (step, request, hooks, stop) => dependencies.runAgent({ ...step, id: scoped(step.id) }, request, hooks, stop),
    runTool: (name, args, stop, nodeId, markStarted) => dependencies.runTool(name, args, stop, scoped(nodeId), markStarted),
    askApproval: (step, request, stop) => dependencies.askApproval({ ...step, id: scoped(step.id) }, request, stop),
    ...(dependencies.loadWorkflow ? { loadWorkflow: (workflowId: string, nodeId: string) => dependencies.loadWorkflow!(workflowId, scoped(nodeId)) } : {}),
  }
}
