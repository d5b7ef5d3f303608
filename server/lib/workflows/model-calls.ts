/**
 * What a workflow run may cost in model calls, known before it runs: every agent node may make
 * `maxToolRounds + 1` model requests per attempt, a model-mode router one, and each retries up to
 * `retries` more times; a loop, its body's worst case once per item it may take (`maxItems`) or
 * per iteration it may run (`maxIterations`), plus one question per iteration to an `ask` condition's
 * model; a workflow step's child is counted when it starts (its own worst case against what the
 * run has left: execute.ts). Nodes run at most once per run or iteration (graphs have no cycles), so the sum is a
 * true upper bound, checked against the role's `workflowModelCalls` at save and at run.
 */
import type { WorkflowBodyNode, WorkflowDefinition, WorkflowNode } from '../../../shared/types/workflow'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Every model a workflow's agent and model-router nodes call. */
export function workflowModels(definition: WorkflowDefinition): Set<string> {
  const modelsOf = (nodes: ReadonlyArray<WorkflowNode | WorkflowBodyNode>): string[] => nodes.flatMap((node) => {
    if (node.kind === 'agent' || (node.kind === 'router' && node.mode === 'model')) return [node.model ?? definition.defaultModel]
    if (node.kind === 'loop') return [...modelsOf(node.body.nodes), ...(node.mode === 'until' && node.until?.ask ? [node.until.model ?? definition.defaultModel] : [])]
    return []
  })
  return new Set(modelsOf(definition.nodes))
}

/** The most model requests one run of these nodes can make. */
function modelCallBound(nodes: ReadonlyArray<WorkflowNode | WorkflowBodyNode>): number {
  let calls = 0
  for (const node of nodes) {
    const attempts = 1 + ('retries' in node ? node.retries ?? 0 : 0)
    if (node.kind === 'agent') calls += (node.maxToolRounds + 1) * attempts
    else if (node.kind === 'router' && node.mode === 'model') calls += attempts
    else if (node.kind === 'loop') {
      const iterations = node.mode === 'for-each' ? node.maxItems : node.maxIterations
      calls += iterations * modelCallBound(node.body.nodes) + (node.mode === 'until' && node.until?.ask ? node.maxIterations : 0)
    }
  }
  return calls
}

/** The most model requests one run of `definition` can make. */
export function workflowModelCallBound(definition: WorkflowDefinition): number {
  return modelCallBound(definition.nodes)
}

/** Raised when a workflow could make more model calls than the role allows; answered 400. */
export class WorkflowCostError extends DomainError {
  override name = 'WorkflowCostError'
  constructor(readonly calls: number, readonly limit: number) {
    super(`This workflow could make up to ${calls} model calls in one run (agent rounds × attempts, × a loop's items or iterations), more than the ${limit} your role allows. Lower agents' maxToolRounds or retries, a loop's maxItems or maxIterations, or use fewer agent nodes.`)
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
