import { describe, expect, it } from 'vitest'
import { agentStepTools, workflowKnowledgeBases, workflowToolDenials } from '../../../server/lib/workflows/tool-access'
import { withKnowledgeGate } from '../../../server/lib/knowledge/knowledge-tool'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import type { ToolAccessCheck } from '../../../server/lib/tools/policy/tool-policy'
import type { WorkflowDefinition, WorkflowNode } from '../../../shared/types/workflow'

type AgentNode = Extract<WorkflowNode, { kind: 'agent' }>
const agent = (fields: Partial<AgentNode> = {}): AgentNode => ({ id: 'lookup', kind: 'agent', systemPrompt: '', tools: [], maxToolRounds: 3, ...fields })
const policy = (denied: Record<string, string> = {}) => Object.assign((tool: { name: string }) => denied[tool.name], { needsApproval: () => false }) as unknown as ToolAccessCheck

describe('a workflow agent step\'s knowledge bases', () => {
  it('are part of the definition the server accepts, at most ten, and listed with their step (a loop\'s steps too)', () => {
    const definition = {
      version: 1,
      name: 'Ask the handbook',
      defaultModel: 'or3/offline-demo',
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'lookup', kind: 'agent', knowledgeBaseIds: ['kb-1', 'kb-2'] },
        { id: 'each', kind: 'loop', mode: 'for-each', items: '{{input}}', body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'inner', kind: 'agent', knowledgeBaseIds: ['kb-3'] }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'inner' }, { from: 'inner', to: 'done' }] } },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: 'lookup' }, { from: 'lookup', to: 'each' }, { from: 'each', to: 'out' }],
    }
    const checked = validateWorkflow(definition, () => true)
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems))
    expect(workflowKnowledgeBases(checked.workflow)).toEqual([{ nodeId: 'lookup', baseId: 'kb-1' }, { nodeId: 'lookup', baseId: 'kb-2' }, { nodeId: 'inner', baseId: 'kb-3' }])
    const tooMany = validateWorkflow({ ...definition, nodes: [definition.nodes[0], { id: 'lookup', kind: 'agent', knowledgeBaseIds: Array.from({ length: 11 }, (_, index) => `kb-${index}`) }, definition.nodes[3]], edges: [{ from: 'start', to: 'lookup' }, { from: 'lookup', to: 'out' }] }, () => true)
    expect(tooMany).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/knowledgeBaseIds.* at most 10/) }] })
  })

  it('offer search_knowledge over those bases, as the policy (not the conversation gate) says', async () => {
    expect(agentStepTools(agent({ tools: ['calculate'] }), undefined)).toEqual({ toolNames: ['calculate'], toolsEnabled: true })
    expect(agentStepTools(agent(), undefined)).toEqual({ toolNames: [], toolsEnabled: false })
    const allowed = policy()
    // The run's conversation has no base attached: the job's check is gated…
    const step = agentStepTools(agent({ tools: ['calculate'], knowledgeBaseIds: ['kb-1'] }), async () => withKnowledgeGate(allowed, false))
    expect(step).toMatchObject({ toolNames: ['calculate', 'search_knowledge'], toolsEnabled: true, knowledgeBaseIds: ['kb-1'] })
    // …and the step's opens it, to the policy's own check.
    expect(await step.toolAccess!()).toBe(allowed)
    // Named in its tools too: offered once.
    expect(agentStepTools(agent({ tools: ['search_knowledge'], knowledgeBaseIds: ['kb-1'] }), undefined).toolNames).toEqual(['search_knowledge'])
  })

  it('are refused when saved where the policy denies the search, naming the step', () => {
    const definition = { version: 1, name: 'w', description: '', nodes: [{ id: 'start', kind: 'start' }, agent({ knowledgeBaseIds: ['kb-1'] }), { id: 'out', kind: 'output' }], edges: [] } as unknown as WorkflowDefinition
    expect(workflowToolDenials(definition, policy({ search_knowledge: 'an admin turned it off' }))).toEqual([{ nodeId: 'lookup', message: 'Node "lookup" uses the tool "search_knowledge", which you cannot use: an admin turned it off.' }])
    expect(workflowToolDenials(definition, policy())).toEqual([])
  })
})
