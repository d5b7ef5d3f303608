import { describe, expect, it } from 'vitest'
import { assertModelsAllowed, isModelAllowed } from '../../../server/lib/models/model-access'
import { workflowModels } from '../../../server/lib/workflows/model-calls'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'

describe('model access', () => {
  it('allows any model for *, and only the listed ones otherwise', () => {
    expect(isModelAllowed('*', 'anything/at-all')).toBe(true)
    expect(isModelAllowed('or3/offline-demo, openai/gpt-4o-mini', 'openai/gpt-4o-mini')).toBe(true)
    expect(isModelAllowed('or3/offline-demo, openai/gpt-4o-mini', 'openai/gpt-4o')).toBe(false)
    expect(isModelAllowed('or3/offline-demo', 'openai/gpt-4o-mini')).toBe(false)
  })

  it('refuses with a message naming the model and what is on offer', () => {
    expect(() => assertModelsAllowed('or3/offline-demo', 'guest', ['or3/offline-demo', 'openai/gpt-4o'])).toThrow(/Guests may not use the model "openai\/gpt-4o".*or3\/offline-demo, or sign in/)
    expect(() => assertModelsAllowed('or3/offline-demo, openai/gpt-4o-mini', 'user', ['or3/offline-demo'])).not.toThrow()
  })

  it('finds every model a workflow would call, defaulting to the workflow\'s model', () => {
    const definition = structuredClone(WORKFLOW_EXAMPLES['triage-router']!)
    expect([...workflowModels(definition)]).toEqual(['or3/offline-demo'])
    const agent = definition.nodes.find(node => node.kind === 'agent')!
    Object.assign(agent, { model: 'openai/gpt-4o' })
    expect(workflowModels(definition)).toContain('openai/gpt-4o')
  })
})
