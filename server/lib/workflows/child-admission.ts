/**
 * What a workflow step checks before its saved workflow runs as a child run: the nesting depth,
 * the workflow itself (loaded as it is when the step begins, and kept on the step, so a restart
 * resumes the same definition), its worst case in model calls and steps reserved from what the
 * run may still spend, and the prompt and inputs the step gives it, checked as the run form
 * checks them. A refusal is a step error that another attempt would not cure (kind `invalid`).
 */
import type { WorkflowChildRun } from '../../../shared/types/workflow'
import { MAX_WORKFLOW_DEPTH, type WorkflowCallNode } from '../../../shared/schemas/workflow'
import { workflowModelCallBound } from './model-calls'
import { reserveChildSteps } from './step-budget'
import { runInputsOf } from './run-inputs'
import type { WorkflowRunParams } from './run-contract'

/** What admitting a child run needs from its parent run. */
export type ChildAdmission = Pick<WorkflowRunParams, 'dependencies' | 'childModelCalls' | 'childSteps'> & {
  /** The child's depth (the parent's plus one). */
  depth: number
  /** The child run the step had begun before a restart (its definition and budget already settled). */
  interruptedChild?: WorkflowChildRun
}

/** The child run to start (and the prompt and inputs it starts with), or why it may not. */
export async function admitChildRun(node: WorkflowCallNode, input: string, fill: (template: string) => string, parent: ChildAdmission): Promise<{ running: WorkflowChildRun, started: ReturnType<typeof runInputsOf> } | { error: string, kind: 'invalid' }> {
  const { depth } = parent
  if (depth > MAX_WORKFLOW_DEPTH) return { error: `workflows may call workflows only ${MAX_WORKFLOW_DEPTH} deep, and this one would be ${depth} deep (does a workflow call itself?)`, kind: 'invalid' }
  let child = parent.interruptedChild
  if (!child) {
    const loaded = parent.dependencies.loadWorkflow ? await parent.dependencies.loadWorkflow(node.workflowId, node.id) : { error: 'this server cannot run workflows from a workflow here' }
    if ('error' in loaded) return { error: loaded.error, kind: 'invalid' }
    const bound = workflowModelCallBound(loaded.definition)
    if (parent.childModelCalls) {
      if (bound > parent.childModelCalls.left) return { error: `the workflow “${loaded.name}” could make up to ${bound} model calls, and this run may make only ${parent.childModelCalls.left} more (your role's limit on a run's model calls); give it fewer agent rounds or steps`, kind: 'invalid' }
      parent.childModelCalls.left -= bound
    }
    const tooManySteps = parent.childSteps ? reserveChildSteps(parent.childSteps, loaded.definition, loaded.name) : undefined
    if (tooManySteps) return { error: tooManySteps, kind: 'invalid' }
    child = { ...(loaded.runId ? { runId: loaded.runId } : {}), workflowId: node.workflowId, workflowName: loaded.name, ...(loaded.version ? { version: loaded.version } : {}), definition: loaded.definition }
  }
  const given = { prompt: fill(node.prompt ?? '{{input}}'), inputs: Object.fromEntries(Object.entries(node.inputs).map(([name, template]) => [name, fill(template)])) }
  let started: ReturnType<typeof runInputsOf>
  try {
    // The run form's checks: "3" and "true" are taken for number and yes-or-no inputs there too.
    started = runInputsOf(child.definition, { prompt: given.prompt || input, inputs: given.inputs })
  } catch (error) {
    return { error: `the workflow “${child.workflowName}” cannot take what this step gives it: ${(error as Error).message}`, kind: 'invalid' }
  }
  const running: WorkflowChildRun = { ...child, prompt: started.prompt, ...(Object.keys(started.inputs).length > 0 ? { inputs: started.inputs } : {}) }
  return { running, started }
}
