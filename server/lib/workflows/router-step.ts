/**
 * A router step: by condition (the first that matches the input: a phrase it contains, or an RE2
 * pattern), or by asking a model which of the branches leaving the step to take (the branch its
 * reply names first, else the router's default). The input flows on along the chosen branch.
 */
import type { WorkflowNode } from '../../../shared/schemas/workflow'
import type { StepOutcome, WorkflowRunDependencies } from './run-contract'
import { compileRouterPattern } from './router-patterns'

type RouterNode = Extract<WorkflowNode, { kind: 'router' }>

/** What a router asks with. */
export interface RouterContext {
  /** The branches leaving the step. */
  branches: readonly string[]
  /** Renders the step's instruction template. */
  fill: (template: string) => string
  askModel: WorkflowRunDependencies['askModel']
  defaultModel: string
  signal: AbortSignal
}

/** The branch `node` takes for `input`. */
export async function routeStep(node: RouterNode, input: string, context: RouterContext): Promise<StepOutcome> {
  if (node.mode === 'condition') {
    const match = node.conditions.find(item => (item.contains && input.toLowerCase().includes(item.contains.toLowerCase())) || (item.matches && matchesPattern(item.matches, input)))
    return { output: input, branch: match?.branch ?? node.defaultBranch }
  }
  const asked = await context.askModel({
    model: node.model ?? context.defaultModel,
    prompt: `${context.fill(node.instruction ?? '')}\n\nInput:\n${input}\n\nAnswer with exactly one of: ${context.branches.join(', ')}.`,
  }, context.signal)
  if ('error' in asked) return asked
  return { output: input, branch: branchNamed(asked.output, context.branches, node.defaultBranch), ...(asked.usage ? { usage: asked.usage } : {}) }
}

/** Whether a router condition's pattern matches (a pattern that no longer compiles never does). */
function matchesPattern(source: string, input: string): boolean {
  const pattern = compileRouterPattern(source)
  return pattern.ok && pattern.test(input)
}

/** The branch a router's model reply names first, else the router's default. */
function branchNamed(reply: string, branches: readonly string[], fallback: string): string {
  const lower = reply.toLowerCase()
  const chosen = branches.map(branch => ({ branch, at: lower.indexOf(branch.toLowerCase()) })).filter(item => item.at >= 0).sort((a, b) => a.at - b.at)[0]
  return chosen?.branch ?? fallback
}

