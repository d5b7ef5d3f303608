/**
 * Shipped examples that run other examples: a workflow step names one as `example-<key>`.
 * Installing such an example installs what it names first (or uses a workflow of that name the
 * person already has) and puts that workflow's id in its place.
 */
import type { WorkflowDefinition, WorkflowExample } from '../../shared/types/workflow'

const REFERENCE_PREFIX = 'example-'

/** Every workflow step of `definition` (its loops' bodies' too). */
function workflowSteps(definition: WorkflowDefinition) {
  return definition.nodes.flatMap(node => node.kind === 'loop' ? node.body.nodes : [node]).filter(node => node.kind === 'workflow')
}

/** The keys of the shipped examples `definition` runs. */
export function exampleReferences(definition: WorkflowDefinition, examples: readonly WorkflowExample[]): string[] {
  const keys = new Set(examples.map(example => example.key))
  return [...new Set(workflowSteps(definition).map(step => step.workflowId.slice(REFERENCE_PREFIX.length)).filter(key => keys.has(key)))]
}

/** `definition` with each `example-<key>` its workflow steps name replaced by `ids[key]`. */
export function withExampleIds(definition: WorkflowDefinition, ids: Readonly<Record<string, string>>): WorkflowDefinition {
  const swap = <T extends { kind: string }>(node: T): T => {
    if (node.kind !== 'workflow') return node
    const step = node as T & { workflowId: string }
    const key = step.workflowId.startsWith(REFERENCE_PREFIX) ? step.workflowId.slice(REFERENCE_PREFIX.length) : undefined
    return key && ids[key] ? { ...step, workflowId: ids[key] } : node
  }
  return { ...definition, nodes: definition.nodes.map(node => node.kind === 'loop' ? { ...node, body: { ...node.body, nodes: node.body.nodes.map(swap) } } : swap(node)) }
}

/** The longest workflow name the server takes (shared/schemas/workflow.ts). */
const NAME_MAX = 120

/** `name`, or `name (2)`, `name (3)`… when a workflow in `taken` already has it. */
export function unusedName(name: string, taken: readonly { name: string }[]): string {
  const names = new Set(taken.map(item => item.name))
  if (!names.has(name)) return name
  for (let copy = 2; ; copy++) {
    const suffix = ` (${copy})`
    const candidate = `${name.slice(0, NAME_MAX - suffix.length)}${suffix}`
    if (!names.has(candidate)) return candidate
  }
}

/**
 * Installs `example` with `create` (and, first, each example it runs, unless `installed` has a
 * workflow of that example's name); returns what was created, the example last. Installed again,
 * the example gets a name of its own (`… (2)`), so two workflows in the list never share one.
 */
export async function installExample<T extends { id: string, name: string }>(example: WorkflowExample, examples: readonly WorkflowExample[], installed: readonly T[], create: (definition: WorkflowDefinition) => Promise<T>, depth = 0): Promise<T[]> {
  const made: T[] = []
  const ids: Record<string, string> = {}
  if (depth < 3) {
    for (const key of exampleReferences(example.definition, examples)) {
      const child = examples.find(item => item.key === key)!
      const existing = [...installed, ...made].find(item => item.name === child.definition.name)
      if (existing) ids[key] = existing.id
      else {
        const childMade = await installExample(child, examples, [...installed, ...made], create, depth + 1)
        made.push(...childMade)
        ids[key] = childMade.at(-1)!.id
      }
    }
  }
  const definition = withExampleIds(example.definition, ids)
  made.push(await create({ ...definition, name: unusedName(definition.name, [...installed, ...made]) }))
  return made
}
