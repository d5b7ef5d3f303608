import type { WorkflowState } from './types/workflow'

/**
 * Bytes of the step outputs a run keeps as files (each step's, loop iteration's and child run's
 * `outputFile`): what its files take beside its record, counted in its kept size.
 */
export function keptOutputBytes(state: WorkflowState | undefined): number {
  let bytes = 0
  for (const node of Object.values(state?.nodeStates ?? {})) {
    bytes += node.outputFile?.bytes ?? 0
    for (const iteration of node.iterations ?? []) bytes += (iteration.outputFile?.bytes ?? 0) + keptOutputBytes(iteration.state)
    bytes += keptOutputBytes(node.child?.state)
  }
  return bytes
}
