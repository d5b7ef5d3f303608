/**
 * A workflow run's state stored in pieces: each nested run's state (a loop's iteration, a workflow
 * step's child run, at any depth) is a part of its own, and the state that holds it keeps only a
 * reference (`{ "$part": "<path>" }`). A write then sends only the parts that changed since the
 * last one (a run of a hundred iterations changes one or two at a time), never the whole growing
 * document, and no one stored piece grows past one nested run.
 *
 * Paths name a part by where it sits: `<step>.<n>` for iteration n of a loop, `<step>` for a child
 * run, joined with `.` for deeper ones (`each.3.call`). Step ids start with a letter, so the two
 * never collide. A state stored whole (before parts) has no references and reads back as it was.
 */
import type { WorkflowState } from './types/workflow'

const PART = '$part'

/** A state split into its root and its parts, each as JSON. */
export interface WorkflowStateParts {
  root: string
  parts: Map<string, string>
}

/** Splits `state` into its root and one part per nested run (see the file comment). */
export function splitWorkflowState(state: WorkflowState): WorkflowStateParts {
  const parts = new Map<string, string>()
  const strip = (nested: WorkflowState, prefix: string): WorkflowState => {
    const nodeStates: WorkflowState['nodeStates'] = {}
    for (const [id, node] of Object.entries(nested.nodeStates)) {
      let kept = node
      if (node.iterations?.some(iteration => iteration.state)) {
        kept = { ...kept, iterations: node.iterations.map((iteration, index) => iteration.state ? { ...iteration, state: part(`${prefix}${id}.${index + 1}`, iteration.state) } : iteration) }
      }
      if (node.child?.state) kept = { ...kept, child: { ...node.child, state: part(`${prefix}${id}`, node.child.state) } }
      nodeStates[id] = kept
    }
    return { ...nested, nodeStates }
  }
  const part = (path: string, nested: WorkflowState): WorkflowState => {
    parts.set(path, JSON.stringify(strip(nested, `${path}.`)))
    return { [PART]: path } as unknown as WorkflowState
  }
  return { root: JSON.stringify(strip(state, '')), parts }
}

/** The whole state from its root and parts; a part that is missing leaves its nested run without a state. */
export function joinWorkflowState(root: string, partOf: (path: string) => string | undefined): WorkflowState {
  const fill = (nested: WorkflowState): WorkflowState => {
    for (const node of Object.values(nested.nodeStates)) {
      if (node.iterations) node.iterations = node.iterations.map(iteration => (iteration.state ? withState(iteration, iteration.state) : iteration))
      if (node.child?.state) node.child = withState(node.child, node.child.state)
    }
    return nested
  }
  const withState = <T extends { state?: WorkflowState }>(holder: T, state: WorkflowState): T => {
    const path = (state as unknown as Record<string, unknown>)[PART]
    if (typeof path !== 'string') return { ...holder, state: fill(state) }
    const text = partOf(path)
    if (text === undefined) {
      const { state: _missing, ...rest } = holder
      return rest as T
    }
    return { ...holder, state: fill(JSON.parse(text) as WorkflowState) }
  }
  return fill(JSON.parse(root) as WorkflowState)
}
