import { describe, expect, it } from 'vitest'
import { assertModelsAllowed, isModelAllowed, workflowModels } from '../../../server/lib/auth/model-access'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'

const models = { admin: '*', user: 'or3/offline-demo, openai/gpt-4o-mini', guest: 'or3/offline-demo' }

describe('model access', () => {
  it('allows any model for *, and only the listed ones otherwise', () => {
    expect(isModelAllowed(models, 'admin', 'anything/at-all')).toBe(true)
    expect(isModelAllowed(models, 'user', 'openai/gpt-4o-mini')).toBe(true)
    expect(isModelAllowed(models, 'user', 'openai/gpt-4o')).toBe(false)
    expect(isModelAllowed(models, 'guest', 'openai/gpt-4o-mini')).toBe(false)
  })

  it('refuses with a message naming the model and what is on offer', () => {
    expect(() => assertModelsAllowed(models, 'guest', ['or3/offline-demo', 'openai/gpt-4o'])).toThrow(/Guests may not use the model "openai\/gpt-4o".*or3\/offline-demo, or sign in/)
    expect(() => assertModelsAllowed(models, 'user', ['or3/offline-demo'])).not.toThrow()
  })

  it('finds every model a workflow would call, defaulting to the workflow\'s model', () => {
    const definition = structuredClone(WORKFLOW_EXAMPLES['triage-router']!)
    expect(workflowModels(definition)).toEqual(['or3/offline-demo'])
    const agent = definition.nodes.find(node => node.kind === 'agent')!
    Object.assign(agent, { model: 'openai/gpt-4o' })
    expect(workflowModels(definition)).toContain('openai/gpt-4o')
  })
})
