/**
 * The tools a workflow uses, checked against the tool policy of the person saving or running it:
 * tool nodes call one directly, agent nodes offer theirs to a model. Checked at save (so a
 * workflow no one may run is refused with the node named) and again at run time, node by node.
 */
import { policyToolNamed, type ToolAccessCheck } from '../tools/policy/tool-policy'
import { SEARCH_KNOWLEDGE, withKnowledgeBases } from '../knowledge/knowledge-tool'
import { everyStep } from './validate'
import type { WorkflowDefinition, WorkflowNode, WorkflowProblem } from '../../../shared/types/workflow'

type AgentNode = Extract<WorkflowNode, { kind: 'agent' }>

/** The server tools an agent step offers: its own, and `search_knowledge` when it has knowledge bases. */
export function agentStepToolNames(node: AgentNode): string[] {
  return (node.knowledgeBaseIds?.length ?? 0) > 0 && !node.tools.includes(SEARCH_KNOWLEDGE) ? [...node.tools, SEARCH_KNOWLEDGE] : node.tools
}

/**
 * What an agent step's tool loop is given: the tools it offers, and with knowledge bases, those
 * bases (searched whatever the run's conversation has attached) and the policy's own word on
 * `search_knowledge` (the conversation gate does not apply to a step that brings its bases).
 */
export function agentStepTools(node: AgentNode, toolAccess: (() => Promise<ToolAccessCheck>) | undefined) {
  const toolNames = agentStepToolNames(node)
  const bases = node.knowledgeBaseIds ?? []
  return {
    toolNames,
    toolsEnabled: toolNames.length > 0,
    ...(bases.length > 0 ? { knowledgeBaseIds: bases, toolAccess: toolAccess && (async () => withKnowledgeBases(await toolAccess())) } : {}),
  }
}

/** The knowledge bases the agent steps of `definition` search, each with its step. */
export function workflowKnowledgeBases(definition: WorkflowDefinition): Array<{ nodeId: string, baseId: string }> {
  return everyStep(definition).flatMap(node => node.kind === 'agent' ? (node.knowledgeBaseIds ?? []).map(baseId => ({ nodeId: node.id, baseId })) : [])
}

/** One problem per node and tool the policy denies (a loop's steps included). */
export function workflowToolDenials(definition: WorkflowDefinition, access: ToolAccessCheck): WorkflowProblem[] {
  const problems: WorkflowProblem[] = []
  for (const node of everyStep(definition)) {
    const names = node.kind === 'tool' ? [node.tool] : node.kind === 'agent' ? agentStepToolNames(node) : []
    for (const name of names) {
      const denied = access(policyToolNamed(name))
      if (denied !== undefined) problems.push({ nodeId: node.id, message: `Node "${node.id}" uses the tool "${name}", which you cannot use: ${denied}.` })
    }
  }
  return problems
}
