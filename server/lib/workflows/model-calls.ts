/**
 * What a workflow run may cost in model calls, known before it runs: every agent node may make
 * `maxToolRounds + 1` model requests per attempt, a model-mode router one, and each retries up to
 * `retries` more times. Nodes run at most once per run (the graph has no cycles), so the sum is a
 * true upper bound, checked against the role's `workflowModelCalls` at save and at run.
 */
import type { WorkflowDefinition } from '../../../shared/types/workflow'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Every model a workflow's agent and model-router nodes call. */
export function workflowModels(definition: WorkflowDefinition): Set<string> {
  return new Set(definition.nodes.flatMap(node => node.kind === 'agent' || (node.kind === 'router' && node.mode === 'model') ? [node.model ?? definition.defaultModel] : []))
}

/** The most model requests one run of `definition` can make. */
export function workflowModelCallBound(definition: WorkflowDefinition): number {
  let calls = 0
  for (const node of definition.nodes) {
    const attempts = 1 + ('retries' in node ? node.retries ?? 0 : 0)
    if (node.kind === 'agent') calls += (node.maxToolRounds + 1) * attempts
    else if (node.kind === 'router' && node.mode === 'model') calls += attempts
  }
  return calls
}

/** Raised when a workflow could make more model calls than the role allows; answered 400. */
export class WorkflowCostError extends DomainError {
  override name = 'WorkflowCostError'
  constructor(readonly calls: number, readonly limit: number) {
    super(`This workflow could make up to ${calls} model calls in one run (agent rounds × attempts), more than the ${limit} your role allows. Lower agents' maxToolRounds or retries, or use fewer agent nodes.`)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 400, statusMessage: 'Workflow too costly', message: this.message, data: { modelCalls: this.calls, limit: this.limit } }
  }

  static isInstance(error: unknown): error is WorkflowCostError {
    return error instanceof Error && error.name === 'WorkflowCostError'
  }
}

/** Throws `WorkflowCostError` when one run of `definition` could exceed `limit` model calls. */
export function assertWorkflowCost(definition: WorkflowDefinition, limit: number): void {
  const calls = workflowModelCallBound(definition)
  if (calls > limit) throw new WorkflowCostError(calls, limit)
}
