import { describe, expect, it } from 'vitest'
import { exampleReferences, installExample, unusedName } from '../../app/utils/workflow-examples'
import { WORKFLOW_EXAMPLES } from '../../server/lib/workflows/examples'
import { validateWorkflow } from '../../server/lib/workflows/validate'
import type { WorkflowDefinition, WorkflowExample } from '../../shared/types/workflow'

const examples: WorkflowExample[] = Object.entries(WORKFLOW_EXAMPLES).map(([key, definition]) => ({ key, name: definition.name, definition }))
const polish = examples.find(example => example.key === 'answer-then-polish')!

describe('installing an example that runs another', () => {
  it('installs the example it runs first and puts its id in the workflow step', async () => {
    expect(exampleReferences(polish.definition, examples)).toEqual(['research-draft-critique'])
    const created: WorkflowDefinition[] = []
    const made = await installExample(polish, examples, [], async (definition) => {
      created.push(definition)
      return { id: `id-${created.length}`, name: definition.name }
    })
    expect(made.map(item => item.id)).toEqual(['id-1', 'id-2'])
    expect(created[0]!.name).toBe('Research → draft → critique → answer')
    expect(created[1]!.nodes.find(node => node.id === 'research')).toMatchObject({ kind: 'workflow', workflowId: 'id-1' })
    expect(validateWorkflow(created[1], () => true).ok).toBe(true)
  })

  it('uses a workflow of that name the person already has', async () => {
    const made = await installExample<{ id: string, name: string, definition?: WorkflowDefinition }>(polish, examples, [{ id: 'mine', name: 'Research → draft → critique → answer' }], async definition => ({ id: 'new', name: definition.name, definition }))
    expect(made).toHaveLength(1)
    expect((made[0] as unknown as { definition: WorkflowDefinition }).definition.nodes.find(node => node.id === 'research')).toMatchObject({ workflowId: 'mine' })
  })

  it('names a second install of the same example apart, and keeps a long name within the limit', async () => {
    const installed = [{ id: 'first', name: polish.definition.name }, { id: 'child', name: 'Research → draft → critique → answer' }]
    const made = await installExample(polish, examples, installed, async definition => ({ id: 'again', name: definition.name }))
    expect(made.map(item => item.name)).toEqual([`${polish.definition.name} (2)`])
    expect(unusedName(polish.definition.name, [...installed, ...made])).toBe(`${polish.definition.name} (3)`)
    const long = 'x'.repeat(120)
    expect(unusedName(long, [{ name: long }])).toBe(`${'x'.repeat(116)} (2)`)
    expect(unusedName('Fresh', installed)).toBe('Fresh')
  })
})
