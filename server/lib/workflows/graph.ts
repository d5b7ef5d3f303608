/**
 * A workflow's graph as a run walks it: which edges are live, skipped or not yet decided, what
 * flows into a node, and which nodes are ready. Pure bookkeeping, no I/O.
 */
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../../shared/schemas/workflow'

type EdgeState = 'pending' | 'active' | 'skipped'

function joinInputs(parts: Array<{ label: string, output: string }>): string {
  if (parts.length === 1) return parts[0]!.output
  return parts.map(part => `## ${part.label}\n\n${part.output}`).join('\n\n')
}

/** The edges of one run, and the outputs that flowed along them. */
export class WorkflowGraph {
  readonly nodes: Map<string, WorkflowNode>
  private readonly incoming = new Map<string, WorkflowEdge[]>()
  private readonly outgoing = new Map<string, WorkflowEdge[]>()
  private readonly edgeState = new Map<WorkflowEdge, EdgeState>()

  constructor(readonly workflow: WorkflowDefinition) {
    this.nodes = new Map(workflow.nodes.map(node => [node.id, node]))
    for (const edge of workflow.edges) {
      this.incoming.set(edge.to, [...(this.incoming.get(edge.to) ?? []), edge])
      this.outgoing.set(edge.from, [...(this.outgoing.get(edge.from) ?? []), edge])
      this.edgeState.set(edge, 'pending')
    }
  }

  /** A node's label, for messages. */
  label(nodeId: string): string {
    return this.nodes.get(nodeId)?.label ?? nodeId
  }

  /** The branches leaving a node (a router's choices). */
  branchesOf(nodeId: string): string[] {
    return [...new Set((this.outgoing.get(nodeId) ?? []).map(edge => edge.branch!))]
  }

  /** Whether an edge leaving `nodeId` carries `branch`. */
  hasBranch(nodeId: string, branch: string): boolean {
    return (this.outgoing.get(nodeId) ?? []).some(edge => edge.branch === branch)
  }

  /** A finished node's outgoing edges go live (a router or approval: only its branch's). */
  release(node: WorkflowNode, branch?: string): void {
    const branching = node.kind === 'router' || node.kind === 'approval'
    for (const edge of this.outgoing.get(node.id) ?? []) this.edgeState.set(edge, branching && edge.branch !== branch ? 'skipped' : 'active')
  }

  /** A skipped node's outgoing edges are skipped too. */
  skip(nodeId: string): void {
    for (const edge of this.outgoing.get(nodeId) ?? []) this.edgeState.set(edge, 'skipped')
  }

  /** `wait` while an edge into the node is undecided; `skip` when none is live; else `run`. */
  readiness(node: WorkflowNode): 'wait' | 'skip' | 'run' {
    const edges = this.incoming.get(node.id) ?? []
    if (edges.some(edge => this.edgeState.get(edge) === 'pending')) return 'wait'
    if (node.kind !== 'start' && !edges.some(edge => this.edgeState.get(edge) === 'active')) return 'skip'
    return 'run'
  }

  /** What flows into a node: the outputs along its live edges, labelled when there are several. */
  inputOf(node: WorkflowNode, prompt: string, outputs: Readonly<Record<string, string | undefined>>): string {
    if (node.kind === 'start') return prompt
    const active = (this.incoming.get(node.id) ?? []).filter(edge => this.edgeState.get(edge) === 'active')
    return joinInputs(active.map(edge => ({ label: this.label(edge.from), output: outputs[edge.from] ?? '' })))
  }
}
