/**
 * Checks a workflow beyond its shape: one start, an output, edges between existing nodes, tools
 * the registry has, router branches that exist, and no cycle (repeating is a loop step's job);
 * each loop's body the same, as a graph of its own. Every problem names its node.
 */
import { workflowDefinitionSchema, type WorkflowBodyNode, type WorkflowDefinition, type WorkflowEdge, type WorkflowLoopNode, type WorkflowNode } from '../../../shared/schemas/workflow'
import type { SavedWorkflow, WorkflowProblem } from '../../../shared/types/workflow'

export type { WorkflowProblem } from '../../../shared/types/workflow'
import type { RunTools } from '../tools/run-tools'
import { compileRouterPattern } from './router-patterns'
import { schemaProblemInWords } from './schema-problems'


/** A valid definition, or the problems that make it invalid. */
export type WorkflowValidation = { ok: true, workflow: WorkflowDefinition } | { ok: false, problems: WorkflowProblem[] }

/** Validates `raw`; `hasTool` says whether the server registry can run a tool. */
export function validateWorkflow(raw: unknown, hasTool: (name: string) => boolean): WorkflowValidation {
  const parsed = workflowDefinitionSchema.safeParse(raw)
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => {
        // A problem inside a step is shown on that step, worded about its own field.
        const step = stepAt(raw, issue.path)
        const message = schemaProblemInWords(issue, step?.within ?? issue.path)
        return step ? { nodeId: step.nodeId, message } : { message }
      }),
    }
  }
  const workflow = parsed.data
  const problems: WorkflowProblem[] = []
  // Ids are unique across the workflow and its loops' bodies: {{nodes.<id>}} names one step.
  const seen = new Set<string>()
  for (const node of everyStep(workflow)) {
    if (seen.has(node.id)) problems.push({ nodeId: node.id, message: `Node "${node.id}" appears twice; node ids must be unique (in loop bodies too).` })
    seen.add(node.id)
  }
  checkGraph(workflow, problems, hasTool, 'A workflow')
  for (const node of workflow.nodes) if (node.kind === 'loop') checkLoop(node, problems, hasTool)
  return problems.length > 0 ? { ok: false, problems } : { ok: true, workflow }
}

/**
 * The innermost step (with a text id) on `path` through `raw` (a loop's body's steps too), and the
 * rest of the path within it; undefined for a problem outside every step.
 */
function stepAt(raw: unknown, path: ReadonlyArray<PropertyKey>): { nodeId: string, within: PropertyKey[] } | undefined {
  let found: { nodeId: string, within: PropertyKey[] } | undefined
  let at: unknown = raw
  for (let index = 0; index < path.length && at !== null && typeof at === 'object'; index++) {
    at = (at as Record<PropertyKey, unknown>)[path[index] as string]
    const id = path[index - 1] === 'nodes' && typeof path[index] === 'number' && at !== null && typeof at === 'object' ? (at as { id?: unknown }).id : undefined
    if (typeof id === 'string') found = { nodeId: id, within: path.slice(index + 1) }
  }
  return found
}

type GraphNode = WorkflowDefinition['nodes'][number] | WorkflowBodyNode

/** The checks every graph takes, the workflow's and each loop's body (`what` names it in messages). */
function checkGraph(graph: { nodes: GraphNode[], edges: WorkflowEdge[] }, problems: WorkflowProblem[], hasTool: (name: string) => boolean, what: 'A workflow' | 'A loop\'s body'): void {
  const byId = new Map<string, GraphNode>(graph.nodes.map(node => [node.id, node]))
  const starts = graph.nodes.filter(node => node.kind === 'start')
  if (starts.length !== 1) problems.push({ message: `${what} needs exactly one start node (found ${starts.length}).` })
  if (!graph.nodes.some(node => node.kind === 'output')) problems.push({ message: `${what} needs an output node.` })

  const outgoing = new Map<string, WorkflowEdge[]>()
  const incoming = new Map<string, WorkflowEdge[]>()
  for (const edge of graph.edges) {
    if (!byId.has(edge.from)) problems.push({ nodeId: edge.from, message: `An edge starts at "${edge.from}", which is not a node${what === 'A workflow' ? '' : ' of the body'}.` })
    if (!byId.has(edge.to)) problems.push({ nodeId: edge.to, message: `An edge leads to "${edge.to}", which is not a node${what === 'A workflow' ? '' : ' of the body'}.` })
    outgoing.set(edge.from, [...(outgoing.get(edge.from) ?? []), edge])
    incoming.set(edge.to, [...(incoming.get(edge.to) ?? []), edge])
  }

  for (const node of graph.nodes) {
    const out = outgoing.get(node.id) ?? []
    const into = incoming.get(node.id) ?? []
    if (node.kind === 'start' && into.length > 0) problems.push({ nodeId: node.id, message: `The start node "${node.id}" cannot have incoming edges.` })
    if (node.kind !== 'start' && into.length === 0) problems.push({ nodeId: node.id, message: `Node "${node.id}" is never reached: no edge leads to it.` })
    if (node.kind === 'output' && out.length > 0) problems.push({ nodeId: node.id, message: `The output node "${node.id}" cannot have outgoing edges.` })
    if (node.kind !== 'output' && out.length === 0) problems.push({ nodeId: node.id, message: `Node "${node.id}" leads nowhere: add an edge from it.` })
    if (node.kind === 'tool' && !hasTool(node.tool)) problems.push({ nodeId: node.id, message: `Node "${node.id}" calls the tool "${node.tool}", which this server does not have.` })
    if (node.kind === 'agent') {
      for (const tool of node.tools) if (!hasTool(tool)) problems.push({ nodeId: node.id, message: `Node "${node.id}" may use the tool "${tool}", which this server does not have.` })
    }
    if (node.kind === 'router') {
      const branches = new Set(out.map(edge => edge.branch))
      if (out.some(edge => !edge.branch)) problems.push({ nodeId: node.id, message: `Every edge leaving the router "${node.id}" needs a branch name.` })
      const named = new Set([node.defaultBranch, ...node.conditions.map(item => item.branch)])
      for (const branch of named) if (!branches.has(branch)) problems.push({ nodeId: node.id, message: `The router "${node.id}" can choose the branch "${branch}", but no edge from it has that branch.` })
      if (node.mode === 'model' && !node.instruction) problems.push({ nodeId: node.id, message: `The router "${node.id}" asks a model, so it needs an instruction.` })
      for (const item of node.conditions) {
        if (!item.contains && !item.matches) problems.push({ nodeId: node.id, message: `A condition of the router "${node.id}" (branch "${item.branch}") needs "contains" or "matches".` })
        if (item.matches) {
          const pattern = compileRouterPattern(item.matches)
          if (!pattern.ok) problems.push({ nodeId: node.id, message: `The router "${node.id}" has a pattern for the branch "${item.branch}" that cannot be used (${pattern.error}); back-references and look-arounds are not supported.` })
        }
      }
    } else if (node.kind === 'approval') {
      const wrong = out.find(edge => edge.branch !== 'approve' && edge.branch !== 'reject')
      if (wrong) problems.push({ nodeId: node.id, message: `Every edge leaving the approval step "${node.id}" needs the branch "approve" or "reject" (the edge to "${wrong.to}" has ${wrong.branch ? `"${wrong.branch}"` : 'none'}).` })
      else if (!out.some(edge => edge.branch === 'approve')) problems.push({ nodeId: node.id, message: `The approval step "${node.id}" needs an edge with the branch "approve" (where the run goes on when the person approves).` })
    } else if (out.some(edge => edge.branch)) {
      problems.push({ nodeId: node.id, message: `Only router and approval edges have branch names; remove it from the edges leaving "${node.id}".` })
    }
  }

  const cycle = findCycle(graph)
  if (cycle) problems.push({ nodeId: cycle[0], message: `Nodes ${cycle.map(node => `"${node}"`).join(' → ')} form a cycle; to repeat steps, put them in a loop step's body.` })
}

/** A loop's own settings, then its body as a graph of its own. */
function checkLoop(loop: WorkflowLoopNode, problems: WorkflowProblem[], hasTool: (name: string) => boolean): void {
  if (loop.mode === 'until') {
    const until = loop.until
    if (!until || (!until.contains && !until.matches && !until.ask)) problems.push({ nodeId: loop.id, message: `The loop "${loop.id}" repeats until a condition holds, so it needs one: "contains", "matches" or "ask" (a yes-or-no question for a model).` })
    if (until?.matches) {
      const pattern = compileRouterPattern(until.matches)
      if (!pattern.ok) problems.push({ nodeId: loop.id, message: `The loop "${loop.id}" has a pattern that cannot be used (${pattern.error}); back-references and look-arounds are not supported.` })
    }
  }
  const before = problems.length
  checkGraph(loop.body, problems, hasTool, 'A loop\'s body')
  for (const problem of problems.slice(before)) problem.message = `In the loop "${loop.id}": ${problem.message}`
}

/** A cycle as a list of node ids, if there is one. */
function findCycle(workflow: { nodes: GraphNode[], edges: WorkflowEdge[] }): string[] | undefined {
  const next = new Map<string, string[]>()
  for (const edge of workflow.edges) next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to])
  const state = new Map<string, 'visiting' | 'done'>()
  const path: string[] = []
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined
    if (state.get(node) === 'visiting') return [...path.slice(path.indexOf(node)), node]
    state.set(node, 'visiting')
    path.push(node)
    for (const target of next.get(node) ?? []) {
      const found = visit(target)
      if (found) return found
    }
    path.pop()
    state.set(node, 'done')
    return undefined
  }
  for (const node of workflow.nodes) {
    const found = visit(node.id)
    if (found) return found
  }
  return undefined
}

/** Every step of `definition`, those in its loops' bodies too. */
export function everyStep(definition: Pick<WorkflowDefinition, 'nodes'>): Array<WorkflowNode | WorkflowBodyNode> {
  return [...definition.nodes, ...definition.nodes.flatMap(node => node.kind === 'loop' ? node.body.nodes : [])]
}

/** What a workflow's check reads of the tool registry (the runtime's, or a test's). */
export type WorkflowToolLookup = Pick<RunTools, 'get'>

/** Validates against the tools registered in `tools` (enabled and runnable on the server). */
export function validateWorkflowWithTools(raw: unknown, tools: WorkflowToolLookup): WorkflowValidation {
  return validateWorkflow(raw, (name) => {
    const tool = tools.get(name)
    return Boolean(tool && tool.enabled && tool.runtime !== 'client')
  })
}

/** `runnableWorkflow`'s reason as a sentence of its own (a notification's body, a schedule's last outcome). */
export function reasonAsSentence(reason: string): string {
  return `${reason[0]!.toUpperCase()}${reason.slice(1)}.`
}

/** A saved workflow as a run (a schedule's, a workflow step's child) takes it: checked against today's tools, or why it cannot run. */
export function runnableWorkflow(saved: Pick<SavedWorkflow, 'name' | 'definition'>, tools: WorkflowToolLookup): { ok: true, workflow: WorkflowDefinition } | { ok: false, error: string } {
  const checked = validateWorkflowWithTools(saved.definition, tools)
  return checked.ok ? checked : { ok: false, error: `the workflow “${saved.name}” is not valid now: ${checked.problems.map(problem => problem.message).join(' ')}` }
}
