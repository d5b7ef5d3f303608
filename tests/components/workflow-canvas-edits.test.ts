import { describe, expect, it } from 'vitest'
import { validateWorkflow } from '../../server/lib/workflows/validate'
import { addStep, allStepIds, autoLayout, branchesOf, connectSteps, freePositionNear, freeStepId, layoutPositions, loopBody, moveStep, removeEdge, removeStep, renameStep, STEP_HEIGHT, STEP_WIDTH, templateVariables, updateStep, withLoopBody } from '../../app/utils/workflow-canvas'
import { WORKFLOW_EXAMPLES } from '../../server/lib/workflows/examples'
import type { WorkflowDefinition } from '../../shared/types/workflow'

const blank: WorkflowDefinition = {
  version: 1,
  name: 'Blank',
  description: '',
  defaultModel: 'or3/offline-demo',
  nodes: [{ id: 'start', kind: 'start', position: { x: 0, y: 60 } }, { id: 'output', kind: 'output', position: { x: 480, y: 60 } }],
  edges: [{ from: 'start', to: 'output' }],
}

describe('what the workflow canvas does to a definition', () => {
  it('places a step added from the palette where the view is: there when free, else the nearest free place', () => {
    const free = freePositionNear(blank, { x: 240 + STEP_WIDTH / 2, y: 300 })
    expect(free).toEqual({ x: 240, y: 300 - STEP_HEIGHT / 2 })
    // Over the start step: moved below or above it, never on it.
    const busy = freePositionNear(blank, { x: STEP_WIDTH / 2, y: 60 + STEP_HEIGHT / 2 })
    expect(Math.abs(busy.y - 60)).toBeGreaterThanOrEqual(STEP_HEIGHT + 24)
    expect(busy.x).toBe(0)
  })

  it('builds start → agent → output that the server accepts', () => {
    const added = addStep(blank, 'agent', { x: 240.4, y: 200.6 })
    expect(added.id).toBe('agent')
    let definition = removeEdge(added.definition, 0)
    definition = connectSteps(definition, 'start', 'agent')
    definition = connectSteps(definition, 'agent', 'output')
    definition = updateStep(definition, 'agent', { systemPrompt: 'Be brief.' })
    expect(definition.nodes.find(node => node.id === 'agent')).toEqual({ id: 'agent', kind: 'agent', position: { x: 240, y: 201 }, systemPrompt: 'Be brief.', tools: [], maxToolRounds: 3 })
    expect(definition.edges).toEqual([{ from: 'start', to: 'agent' }, { from: 'agent', to: 'output' }])
    expect(validateWorkflow(definition, () => true)).toMatchObject({ ok: true })
    // The input was not changed: every edit is a new definition (the undo history keeps the old ones).
    expect(blank.edges).toEqual([{ from: 'start', to: 'output' }])
  })

  it('builds a loop whose body is edited as a definition of its own, with ids apart from every step\'s, that the server accepts', () => {
    const added = addStep(blank, 'loop', { x: 240, y: 60 })
    let definition = connectSteps(connectSteps(removeEdge(added.definition, 0), 'start', 'loop'), 'loop', 'output')
    const loop = definition.nodes.find(node => node.id === 'loop')!
    expect(loop).toMatchObject({ kind: 'loop', mode: 'for-each', body: { nodes: [{ id: 'loop-item', kind: 'start' }, { id: 'loop-result', kind: 'output' }], edges: [{ from: 'loop-item', to: 'loop-result' }] } })
    // Inside the body: an agent between its start and its output, named apart from the steps outside.
    let body = loopBody(definition, 'loop')!
    const inner = addStep(body, 'agent', undefined, allStepIds(definition))
    body = connectSteps(connectSteps(removeEdge(inner.definition, 0), 'loop-item', inner.id), inner.id, 'loop-result')
    body = updateStep(body, inner.id, { prompt: 'Reply to {{item}}' })
    definition = withLoopBody(definition, 'loop', body)
    expect(allStepIds(definition)).toEqual(new Set(['start', 'output', 'loop', 'loop-item', 'loop-result', 'agent']))
    expect(freeStepId(definition, 'agent')).toBe('agent-2')
    expect(addStep(loopBody(definition, 'loop')!, 'agent', undefined, allStepIds(definition)).id).toBe('agent-2')
    expect(templateVariables(loopBody(definition, 'loop')!, 'loop-result', true)).toEqual(['{{prompt}}', '{{input}}', '{{item}}', '{{index}}', '{{previous}}', '{{nodes.agent}}'])
    expect(validateWorkflow(definition, () => true)).toMatchObject({ ok: true })
    expect(loopBody(definition, 'start')).toBeUndefined()
  })

  it('names new steps apart, and places one added from the keyboard right of the others', () => {
    let definition = addStep(blank, 'agent').definition
    expect(freeStepId(definition, 'agent')).toBe('agent-2')
    definition = addStep(definition, 'agent').definition
    expect(freeStepId(definition, 'agent')).toBe('agent-3')
    const positions = layoutPositions(definition)
    expect(positions.get('agent')!.x).toBeGreaterThan(480)
    expect(positions.get('agent-2')!.x).toBeGreaterThan(positions.get('agent')!.x)
  })

  it('gives router and approval edges a branch each (the next unused), and refuses loops to itself and repeats', () => {
    let definition = addStep(blank, 'router').definition
    definition = updateStep(definition, 'router', { conditions: [{ branch: 'weather', contains: 'rain' }], defaultBranch: 'other' })
    expect(branchesOf(definition.nodes.find(node => node.id === 'router'))).toEqual(['weather', 'other'])
    definition = connectSteps(definition, 'router', 'output')
    definition = addStep(definition, 'agent').definition
    definition = connectSteps(definition, 'router', 'agent')
    expect(definition.edges.filter(edge => edge.from === 'router')).toEqual([{ from: 'router', to: 'output', branch: 'weather' }, { from: 'router', to: 'agent', branch: 'other' }])
    expect(connectSteps(definition, 'router', 'output', 'weather')).toBe(definition)
    expect(connectSteps(definition, 'agent', 'agent')).toBe(definition)
    expect(branchesOf({ id: 'ok', kind: 'approval' })).toEqual(['approve', 'reject'])
  })

  it('renames a step with its edges and the templates that name it, unless the name is taken', () => {
    let definition = addStep(blank, 'agent').definition
    definition = connectSteps(definition, 'start', 'agent')
    definition = updateStep(definition, 'output', { template: 'Answer: {{nodes.agent}}' })
    const renamed = renameStep(definition, 'agent', 'writer')
    expect(renamed.nodes.map(node => node.id)).toEqual(['start', 'output', 'writer'])
    expect(renamed.edges).toContainEqual({ from: 'start', to: 'writer' })
    expect(renamed.nodes.find(node => node.id === 'output')).toMatchObject({ template: 'Answer: {{nodes.writer}}' })
    expect(renameStep(definition, 'agent', 'output')).toBe(definition)
  })

  it('removes a step with its edges, and moves one', () => {
    let definition = connectSteps(addStep(blank, 'agent').definition, 'start', 'agent')
    definition = moveStep(definition, 'agent', { x: 10.2, y: -5.7 })
    expect(definition.nodes.find(node => node.id === 'agent')!.position).toEqual({ x: 10, y: -6 })
    definition = removeStep(definition, 'agent')
    expect(definition.nodes.map(node => node.id)).toEqual(['start', 'output'])
    expect(definition.edges).toEqual([{ from: 'start', to: 'output' }])
  })

  it('lists the variables a step may use: prompt, input, named inputs, and only the steps before it', () => {
    const definition = WORKFLOW_EXAMPLES['research-draft-critique']!
    const last = definition.nodes.find(node => node.kind === 'output')!.id
    const variables = templateVariables(definition, last)
    expect(variables.slice(0, 2)).toEqual(['{{prompt}}', '{{input}}'])
    const first = definition.edges.find(edge => edge.from === definition.nodes.find(node => node.kind === 'start')!.id)!.to
    expect(variables).toContain(`{{nodes.${first}}}`)
    expect(templateVariables(definition, first)).toEqual(['{{prompt}}', '{{input}}'])
    expect(templateVariables({ ...blank, inputs: [{ name: 'city', type: 'text', required: true }] }, 'output')).toContain('{{inputs.city}}')
  })

  it('lays out every step left to right without overlaps ("Tidy up")', () => {
    const definition = autoLayout(WORKFLOW_EXAMPLES['parallel-perspectives']!)
    const boxes = definition.nodes.map(node => node.position!)
    for (const [index, box] of boxes.entries()) {
      for (const other of boxes.slice(index + 1)) {
        const apart = Math.abs(box.x - other.x) >= STEP_WIDTH || Math.abs(box.y - other.y) >= STEP_HEIGHT
        expect(apart).toBe(true)
      }
    }
    const start = definition.nodes.find(node => node.kind === 'start')!.position!
    const output = definition.nodes.find(node => node.kind === 'output')!.position!
    expect(output.x).toBeGreaterThan(start.x)
  })
})
