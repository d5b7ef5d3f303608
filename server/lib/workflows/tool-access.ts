/**
 * The tools a workflow uses, checked against the tool policy of the person saving or running it:
 * tool nodes call one directly, agent nodes offer theirs to a model. Checked at save (so a
 * workflow no one may run is refused with the node named) and again at run time, node by node.
 */
import { policyToolNamed, type ToolAccessCheck } from '../tools/policy/tool-policy'
import type { WorkflowDefinition, WorkflowProblem } from '../../../shared/types/workflow'

/** One problem per node and tool the policy denies. */
export function workflowToolDenials(definition: WorkflowDefinition, access: ToolAccessCheck): WorkflowProblem[] {
  const problems: WorkflowProblem[] = []
  for (const node of definition.nodes) {
    const names = node.kind === 'tool' ? [node.tool] : node.kind === 'agent' ? node.tools : []
    for (const name of names) {
      const denied = access(policyToolNamed(name))
      if (denied !== undefined) problems.push({ nodeId: node.id, message: `Node "${node.id}" uses the tool "${name}", which you cannot use: ${denied}.` })
    }
  }
  return problems
}
