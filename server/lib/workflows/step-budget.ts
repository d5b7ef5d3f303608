/**
 * How many steps one workflow run may run, known before they start. A step without a model call
 * (a tool, a template, a condition) costs the server time and memory all the same, and loops and
 * workflow steps multiply them: a loop of 100 items each running a sub-workflow that loops again
 * is tens of thousands of steps from one request. So every run has a budget of steps (the role's
 * `workflowSteps`), and what a definition could run is counted against it:
 * - each step once per attempt (`1 + retries`);
 * - a loop, its body's worst case once per item it may take (`maxItems`) or iteration it may run
 *   (`maxIterations`), plus the loop step itself;
 * - a workflow step, one; its child's worst case is counted when the child starts (the child is
 *   loaded then), against what the run has left, and reserved: a child that could pass it fails
 *   its step saying so, before any of its steps runs.
 * Graphs have no cycles and loops are bounded, so this is a true upper bound: checked at save and
 * at start against the role's budget, and the reservations keep a running run within it.
 */
import type { WorkflowBodyNode, WorkflowDefinition, WorkflowNode } from '../../../shared/types/workflow'
import { DomainError, type HttpAnswer } from '../domain-error'
import type { RoleLimits } from '../../../shared/types/limits'
import { assertWorkflowCost } from './model-calls'

/** The most steps one run of these nodes can run (child workflows counted as one step each). */
function stepBound(nodes: ReadonlyArray<WorkflowNode | WorkflowBodyNode>): number {
  let steps = 0
  for (const node of nodes) {
    const attempts = 1 + ('retries' in node ? node.retries ?? 0 : 0)
    if (node.kind === 'loop') steps += attempts * (1 + (node.mode === 'for-each' ? node.maxItems : node.maxIterations) * stepBound(node.body.nodes))
    else steps += attempts
  }
  return steps
}

/** The most steps one run of `definition` can run, its child workflows' own steps left out (they are counted when they start). */
export function workflowStepBound(definition: WorkflowDefinition): number {
  return stepBound(definition.nodes)
}

/** Raised when a workflow could run more steps than the role allows; answered 400. */
export class WorkflowStepsError extends DomainError {
  override name = 'WorkflowStepsError'
  constructor(readonly steps: number, readonly limit: number) {
    super(`This workflow could run up to ${steps.toLocaleString('en')} steps in one run (each step × its attempts, × a loop's items or iterations), more than the ${limit.toLocaleString('en')} your role allows. Lower a loop's maxItems or maxIterations, retries, or the number of steps in a loop's body.`)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Workflow too large', message: this.message, data: { steps: this.steps, limit: this.limit } }
  }

  static isInstance(error: unknown): error is WorkflowStepsError {
    return error instanceof Error && error.name === 'WorkflowStepsError'
  }
}

/** Throws `WorkflowStepsError` when one run of `definition` could run more than `limit` steps. */
export function assertWorkflowSteps(definition: WorkflowDefinition, limit: number): void {
  const steps = workflowStepBound(definition)
  if (steps > limit) throw new WorkflowStepsError(steps, limit)
}

/**
 * Throws when one run of `definition` could pass the role's bounds, in model calls
 * (`WorkflowCostError`) or in steps (`WorkflowStepsError`): the one check at save and at start.
 */
export function assertWorkflowWithinLimits(definition: WorkflowDefinition, limits: Pick<RoleLimits, 'workflowModelCalls' | 'workflowSteps'>): void {
  assertWorkflowCost(definition, limits.workflowModelCalls)
  assertWorkflowSteps(definition, limits.workflowSteps)
}

/** Steps a run's child workflows may still reserve, shared by every nested run of one job. */
export interface StepAllowance {
  left: number
  /** The role's whole budget, for the message. */
  limit: number
}

/** Reserves `definition`'s worst case from `allowance`; the step's error when it does not fit. */
export function reserveChildSteps(allowance: StepAllowance, definition: WorkflowDefinition, name: string): string | undefined {
  const steps = workflowStepBound(definition)
  if (steps > allowance.left) return `the workflow “${name}” could run up to ${steps.toLocaleString('en')} steps, and this run may run only ${allowance.left.toLocaleString('en')} more of the ${allowance.limit.toLocaleString('en')} your role allows one run (loops and child workflows count); give it fewer loop items or steps`
  allowance.left -= steps
  return undefined
}
