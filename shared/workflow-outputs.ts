import type { WorkflowNodeState, WorkflowOutputFile, WorkflowState } from './types/workflow'

/** An output somewhere in a run's state: its text, and the file it is kept as (when it is). */
export interface OutputAt {
  output?: string
  outputFile?: WorkflowOutputFile
}

/** Where step `id`'s outputs go in `folder` (ids are word characters, dashes and, for scoped ones, dots). */
export const outputPathOf = (folder: string, id: string) => `${folder}/${id.replace(/[^\w.-]/g, '_')}`

/**
 * Calls `visit` with every output of `state` (steps, loop iterations, child runs, nested) and the
 * path of its file under `folder` (server/lib/workflows/output-files.ts keeps long ones there); a
 * replacement it returns goes into a copy (what is unchanged is shared, not copied).
 */
export function mapOutputs(state: WorkflowState, folder: string, visit: (at: OutputAt, path: string) => OutputAt | undefined): WorkflowState {
  let nodeStates: Record<string, WorkflowNodeState> | undefined
  for (const [id, node] of Object.entries(state.nodeStates)) {
    const at = outputPathOf(folder, id)
    let next: WorkflowNodeState = node
    const replaced = visit(node, `${at}.txt`)
    if (replaced) next = { ...next, ...replaced }
    if (node.iterations) {
      let iterations: typeof node.iterations | undefined
      for (const [index, iteration] of node.iterations.entries()) {
        const inner = `${at}/${index + 1}`
        const output = visit(iteration, `${inner}.txt`)
        const nested = iteration.state ? mapOutputs(iteration.state, inner, visit) : undefined
        if (output || nested !== iteration.state) (iterations ??= [...node.iterations])[index] = { ...iteration, ...output, ...(nested ? { state: nested } : {}) }
      }
      if (iterations) next = { ...next, iterations }
    }
    if (node.child?.state) {
      const nested = mapOutputs(node.child.state, `${at}/child`, visit)
      if (nested !== node.child.state) next = { ...next, child: { ...node.child, state: nested } }
    }
    if (next !== node) (nodeStates ??= { ...state.nodeStates })[id] = next
  }
  return nodeStates ? { ...state, nodeStates } : state
}

/**
 * Bytes of the step outputs a run keeps as files (each step's, loop iteration's and child run's
 * `outputFile`): what its files take beside its record, counted in its kept size.
 */
export function keptOutputBytes(state: WorkflowState | undefined): number {
  let bytes = 0
  if (state) {
    mapOutputs(state, '', (at) => {
      bytes += at.outputFile?.bytes ?? 0
      return undefined
    })
  }
  return bytes
}
