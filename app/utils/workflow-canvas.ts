/**
 * What the visual workflow editor does to a definition, as pure functions: add, connect, rename,
 * remove and move steps, lay them out (dagre), and say which branches a step's edges may take and
 * which template variables a step may use. The canvas (WorkflowCanvas.vue) only draws and calls these.
 * A loop's body is edited as a definition of its own (`loopBody`, written back with `withLoopBody`).
 */
import dagre from '@dagrejs/dagre'
import { tr } from './i18n'
import type { WorkflowBodyNode, WorkflowDefinition, WorkflowEdge, WorkflowLoopNode, WorkflowNode, WorkflowNodeKind } from '../../shared/types/workflow'

/** The size a step is drawn at (the layout leaves room for it). */
export const STEP_WIDTH = 180
export const STEP_HEIGHT = 58
/** What a loop's group of its own steps adds to its height. */
const LOOP_GROUP_HEIGHT = 26

/** The kinds the palette offers, with their icons. */
const KIND_ICONS: ReadonlyArray<{ kind: WorkflowNodeKind, icon: string }> = [
  { kind: 'start', icon: 'i-lucide-play' },
  { kind: 'agent', icon: 'i-lucide-bot' },
  { kind: 'tool', icon: 'i-lucide-wrench' },
  { kind: 'router', icon: 'i-lucide-split' },
  { kind: 'approval', icon: 'i-lucide-hand' },
  { kind: 'parallel', icon: 'i-lucide-git-fork' },
  { kind: 'merge', icon: 'i-lucide-git-merge' },
  { kind: 'workflow', icon: 'i-lucide-workflow' },
  { kind: 'loop', icon: 'i-lucide-repeat' },
  { kind: 'output', icon: 'i-lucide-flag' },
]

/** The kinds the palette offers, with what each is called and does in a few words (in the person's language). */
export function stepKinds(): Array<{ kind: WorkflowNodeKind, label: string, description: string, icon: string }> {
  return KIND_ICONS.map(({ kind, icon }) => ({ kind, icon, label: tr(`stepKinds.${kind}.label`), description: tr(`stepKinds.${kind}.description`) }))
}

/** Every step of a workflow, its loops' bodies' included (ids are unique across them), each with the loop it is in. */
export function allSteps(definition: Pick<WorkflowDefinition, 'nodes'>): Array<{ step: WorkflowNode | WorkflowBodyNode, loopId?: string }> {
  return definition.nodes.flatMap(node => [{ step: node }, ...(node.kind === 'loop' ? node.body.nodes.map(inner => ({ step: inner, loopId: node.id })) : [])])
}

/** Every step id of a workflow, its loops' bodies' included. */
export function allStepIds(definition: Pick<WorkflowDefinition, 'nodes'>): Set<string> {
  return new Set(allSteps(definition).map(({ step }) => step.id))
}

/** An id made of `base` that is not in `taken`: `agent`, then `agent-2`, `agent-3`… */
function freeId(taken: ReadonlySet<string>, base: string): string {
  if (!taken.has(base)) return base
  let number = 2
  while (taken.has(`${base}-${number}`)) number++
  return `${base}-${number}`
}

/** A new step of `kind` with the fields it needs (a tool step still needs its tool chosen; a loop gets a body of a start and an output). */
function newStep(kind: WorkflowNodeKind, id: string, position: { x: number, y: number }, taken: Set<string>): WorkflowNode {
  const base = { id, position: { x: Math.round(position.x), y: Math.round(position.y) } }
  switch (kind) {
    case 'agent': return { ...base, kind, systemPrompt: '', tools: [], maxToolRounds: 3 }
    case 'tool': return { ...base, kind, tool: '', arguments: {} }
    case 'router': return { ...base, kind, mode: 'condition', conditions: [], defaultBranch: 'default' }
    case 'workflow': return { ...base, kind, workflowId: '', inputs: {} }
    case 'loop': {
      const start = freeId(taken, `${id}-item`)
      taken.add(start)
      const end = freeId(taken, `${id}-result`)
      return { ...base, kind, mode: 'for-each', maxItems: 20, concurrency: 1, collect: 'text', maxIterations: 5, onLimit: 'last', body: { nodes: [{ id: start, kind: 'start', label: tr('stepKinds.loopItem') }, { id: end, kind: 'output', label: tr('stepKinds.loopResult') }], edges: [{ from: start, to: end }] } }
    }
    default: return { ...base, kind } as WorkflowNode
  }
}

/** An id for a new step of `kind` that no step has (nor any in `taken`, the whole workflow's when editing a loop's body). */
export function freeStepId(definition: Pick<WorkflowDefinition, 'nodes'>, kind: WorkflowNodeKind, taken?: ReadonlySet<string>): string {
  return freeId(new Set([...allStepIds(definition), ...taken ?? []]), kind)
}

/** A loop's body as a definition of its own (the workflow's name, inputs and model), for the editor; undefined when `loopId` is not a loop. */
export function loopBody(definition: WorkflowDefinition, loopId: string): WorkflowDefinition | undefined {
  const loop = definition.nodes.find((node): node is WorkflowLoopNode => node.id === loopId && node.kind === 'loop')
  return loop && { ...definition, nodes: loop.body.nodes as WorkflowNode[], edges: loop.body.edges }
}

/** `definition` with the body of loop `loopId` replaced by `body`'s steps and edges (a loop in a body is not taken). */
export function withLoopBody(definition: WorkflowDefinition, loopId: string, body: Pick<WorkflowDefinition, 'nodes' | 'edges'>): WorkflowDefinition {
  const nodes = body.nodes.filter((node): node is WorkflowLoopNode['body']['nodes'][number] => node.kind !== 'loop')
  return { ...definition, nodes: definition.nodes.map(node => node.id === loopId && node.kind === 'loop' ? { ...node, body: { nodes, edges: body.edges } } : node) }
}

/**
 * Where a step added without a place goes when the canvas shows `center`: there, or the nearest free
 * place below or above it (then beside it), so it lands in view without covering another step.
 */
export function freePositionNear(definition: WorkflowDefinition, center: { x: number, y: number }): { x: number, y: number } {
  const placed = [...layoutPositions(definition).values()]
  const gap = 24
  const overlaps = (point: { x: number, y: number }) => placed.some(other =>
    point.x < other.x + STEP_WIDTH + gap && other.x < point.x + STEP_WIDTH + gap
    && point.y < other.y + STEP_HEIGHT + gap && other.y < point.y + STEP_HEIGHT + gap)
  const origin = { x: center.x - STEP_WIDTH / 2, y: center.y - STEP_HEIGHT / 2 }
  for (let column = 0; column < 4; column++) {
    for (let row = 0; row < 6; row++) {
      const step = Math.ceil(row / 2) * (row % 2 === 1 ? 1 : -1)
      const point = { x: origin.x + column * (STEP_WIDTH + gap), y: origin.y + step * (STEP_HEIGHT + gap) }
      if (!overlaps(point)) return point
    }
  }
  return freePosition(definition)
}

/** Where a step added without a place (from the keyboard) goes: right of the rightmost step. */
export function freePosition(definition: WorkflowDefinition): { x: number, y: number } {
  const placed = layoutPositions(definition)
  const right = Math.max(-STEP_WIDTH - 60, ...[...placed.values()].map(point => point.x))
  const top = Math.min(0, ...[...placed.values()].map(point => point.y))
  return { x: right + STEP_WIDTH + 60, y: top }
}

/** `definition` with a new step of `kind` at `position` (or a free place); returns it and the step's id. */
export function addStep(definition: WorkflowDefinition, kind: WorkflowNodeKind, position?: { x: number, y: number }, taken?: ReadonlySet<string>): { definition: WorkflowDefinition, id: string } {
  const ids = new Set([...allStepIds(definition), ...taken ?? []])
  const id = freeId(ids, kind)
  ids.add(id)
  return { definition: { ...definition, nodes: [...definition.nodes, newStep(kind, id, position ?? freePosition(definition), ids)] }, id }
}

/** The branch names a step's outgoing edges choose between (none: its edges are plain). */
export function branchesOf(node: WorkflowNode | undefined): string[] {
  if (node?.kind === 'approval') return ['approve', 'reject']
  if (node?.kind !== 'router') return []
  return [...new Set([...node.conditions.map(condition => condition.branch), node.defaultBranch].filter(Boolean))]
}

/**
 * `definition` with an edge `from` → `to` (its branch: `branch`, else the source's first branch no
 * edge takes yet); unchanged when it would join a step to itself or repeat an edge.
 */
export function connectSteps(definition: WorkflowDefinition, from: string, to: string, branch?: string): WorkflowDefinition {
  if (from === to) return definition
  const source = definition.nodes.find(node => node.id === from)
  const branches = branchesOf(source)
  const used = new Set(definition.edges.filter(edge => edge.from === from).map(edge => edge.branch))
  const chosen = branches.length === 0 ? undefined : branch ?? branches.find(name => !used.has(name)) ?? branches[0]
  if (definition.edges.some(edge => edge.from === from && edge.to === to && edge.branch === chosen)) return definition
  const edge: WorkflowEdge = chosen ? { from, to, branch: chosen } : { from, to }
  return { ...definition, edges: [...definition.edges, edge] }
}

/** `definition` without the edge at `index`. */
export function removeEdge(definition: WorkflowDefinition, index: number): WorkflowDefinition {
  return { ...definition, edges: definition.edges.filter((_, at) => at !== index) }
}

/** `definition` without step `id` and its edges. */
export function removeStep(definition: WorkflowDefinition, id: string): WorkflowDefinition {
  return { ...definition, nodes: definition.nodes.filter(node => node.id !== id), edges: definition.edges.filter(edge => edge.from !== id && edge.to !== id) }
}

/** `definition` with step `id` moved to `position`. */
export function moveStep(definition: WorkflowDefinition, id: string, position: { x: number, y: number }): WorkflowDefinition {
  return { ...definition, nodes: definition.nodes.map(node => node.id === id ? { ...node, position: { x: Math.round(position.x), y: Math.round(position.y) } } : node) }
}

/** `definition` with step `id` changed by `change` (its kind and id stay). */
export function updateStep(definition: WorkflowDefinition, id: string, change: Partial<WorkflowNode>): WorkflowDefinition {
  return { ...definition, nodes: definition.nodes.map(node => node.id === id ? { ...node, ...change, id, kind: node.kind } as WorkflowNode : node) }
}

/** Replaces `{{nodes.<from>}}` with `{{nodes.<to>}}` in every string of `value`. */
function renameInTemplates<T>(value: T, from: string, to: string): T {
  if (typeof value === 'string') return value.replaceAll(`{{nodes.${from}}}`, `{{nodes.${to}}}`) as T
  if (Array.isArray(value)) return value.map(item => renameInTemplates(item, from, to)) as T
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renameInTemplates(item, from, to)])) as T
  return value
}

/** `definition` with step `from` renamed `to`: its edges and the templates that name it follow. Unchanged if `to` is taken. */
export function renameStep(definition: WorkflowDefinition, from: string, to: string): WorkflowDefinition {
  if (from === to || definition.nodes.some(node => node.id === to)) return definition
  const nodes = definition.nodes.map(node => renameInTemplates(node.id === from ? { ...node, id: to } : node, from, to))
  const edges = definition.edges.map(edge => ({ ...edge, from: edge.from === from ? to : edge.from, to: edge.to === from ? to : edge.to }))
  return { ...definition, nodes, edges }
}

/** The steps a run passes before `id` (every step with a path to it). */
function stepsBefore(definition: WorkflowDefinition, id: string): string[] {
  const before = new Set<string>()
  const queue = [id]
  while (queue.length > 0) {
    const current = queue.shift()!
    for (const edge of definition.edges) {
      if (edge.to === current && !before.has(edge.from) && edge.from !== id) {
        before.add(edge.from)
        queue.push(edge.from)
      }
    }
  }
  return definition.nodes.map(node => node.id).filter(node => before.has(node))
}

/** The template variables step `id` may use: the prompt, what flows in, the named inputs, the outputs of the steps before it (in a loop's body, the loop's own too). */
export function templateVariables(definition: WorkflowDefinition, id: string, inLoop = false): string[] {
  return [
    '{{prompt}}',
    '{{input}}',
    ...(inLoop ? ['{{item}}', '{{index}}', '{{previous}}'] : []),
    ...(definition.inputs ?? []).map(input => `{{inputs.${input.name}}}`),
    ...stepsBefore(definition, id).filter(step => definition.nodes.find(node => node.id === step)?.kind !== 'start').map(step => `{{nodes.${step}}}`),
  ]
}

/** Each step's place: where it was put, else where the automatic layout puts it. */
export function layoutPositions(definition: Pick<WorkflowDefinition, 'nodes' | 'edges'>): Map<string, { x: number, y: number }> {
  const auto = definition.nodes.some(node => !node.position) ? autoPositions(definition) : new Map<string, { x: number, y: number }>()
  return new Map(definition.nodes.map(node => [node.id, node.position ?? auto.get(node.id) ?? { x: 0, y: 0 }]))
}

/**
 * Top-to-bottom layered positions for every step, ignoring where they were put: how a run view draws
 * a workflow too wide for its box (a phone), so every step shows at a size that can be read.
 */
export function verticalPositions(definition: Pick<WorkflowDefinition, 'nodes' | 'edges'>): Map<string, { x: number, y: number }> {
  return autoPositions(definition, 'TB')
}

/** Layered positions for every step (dagre), left to right unless told, ignoring where they were put. */
function autoPositions(definition: Pick<WorkflowDefinition, 'nodes' | 'edges'>, direction: 'LR' | 'TB' = 'LR'): Map<string, { x: number, y: number }> {
  const graph = new dagre.graphlib.Graph()
  graph.setGraph({ rankdir: direction, nodesep: 28, ranksep: direction === 'LR' ? 64 : 36, marginx: 8, marginy: 8 })
  graph.setDefaultEdgeLabel(() => ({}))
  // A loop draws its own steps inside it (a row of chips): it is taller.
  for (const node of definition.nodes) graph.setNode(node.id, { width: STEP_WIDTH, height: node.kind === 'loop' ? STEP_HEIGHT + LOOP_GROUP_HEIGHT : STEP_HEIGHT })
  const ids = new Set(definition.nodes.map(node => node.id))
  for (const edge of definition.edges) {
    if (ids.has(edge.from) && ids.has(edge.to)) graph.setEdge(edge.from, edge.to)
  }
  dagre.layout(graph)
  return new Map(definition.nodes.map((node) => {
    const placed = graph.node(node.id)
    return [node.id, { x: Math.round(placed.x - STEP_WIDTH / 2), y: Math.round(placed.y - placed.height / 2) }]
  }))
}

/** `definition` with every step placed by the automatic layout ("Tidy up"). */
export function autoLayout(definition: WorkflowDefinition): WorkflowDefinition {
  const positions = autoPositions(definition)
  return { ...definition, nodes: definition.nodes.map(node => ({ ...node, position: positions.get(node.id)! })) }
}
