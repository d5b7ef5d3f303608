import { beforeEach, describe, expect, it } from 'vitest'
import { clearModelCatalogCache, isCataloguedModel, listModels } from '../../../server/lib/models/model-catalog'
import { freePort } from '../../support/free-port'
import { useFakeOpenRouter } from '../../support/fake-openrouter'
import { testServerConfig } from '../../support/server-config'

const fake = useFakeOpenRouter()

beforeEach(() => {
  clearModelCatalogCache()
})

describe('listModels', () => {
  it('offers only the demo model when no key is configured for OpenRouter', async () => {
    const catalog = await listModels(testServerConfig())
    expect(catalog.source).toBe('demo')
    expect(catalog.models).toEqual([expect.objectContaining({ id: 'or3/offline-demo', name: 'Offline demo model', offline: true, supportsTools: true, acceptsImages: true })])
  })

  it("lists the upstream's tool-capable models with the key, sorted, demo model last", async () => {
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server' } })
    const catalog = await listModels(config)
    expect(catalog.source).toBe('upstream')
    expect(catalog.models.map(model => model.id)).toEqual(['anthropic/claude-sonnet-4', 'openai/gpt-4o-mini', 'or3/offline-demo'])
    expect(catalog.models[0]).toMatchObject({ name: 'Anthropic: Claude Sonnet 4', contextLength: 200000, offline: false, acceptsImages: false, pricing: { prompt: '0.000003', completion: '0.000015' } })
    // Models whose input modalities include images read attached images.
    expect(catalog.models.find(model => model.id === 'openai/gpt-4o-mini')).toMatchObject({ acceptsImages: true })
    expect(fake.modelRequests.at(-1)!.authorization).toBe('Bearer sk-server')
  })

  it('knows which model ids are catalogued: the demo model, those a role names, those an upstream list named', async () => {
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server' } })
    expect(isCataloguedModel(config, 'or3/offline-demo')).toBe(true)
    expect(isCataloguedModel(config, 'openai/gpt-4o-mini')).toBe(false)
    await listModels(config)
    expect(isCataloguedModel(config, 'openai/gpt-4o-mini')).toBe(true)
    expect(isCataloguedModel(config, 'typed/by-someone')).toBe(false)
    expect(isCataloguedModel(testServerConfig({ limits: { roles: { guest: { models: 'or3/offline-demo, acme/own-model' } } } }), 'acme/own-model')).toBe(true)
  })

  it('caches the list per key, and a user key gets its own list', async () => {
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server' } })
    const before = fake.modelRequests.length
    await listModels(config)
    await listModels(config)
    expect(fake.modelRequests.length - before).toBe(1)
    await listModels(config, 'sk-user')
    expect(fake.modelRequests.length - before).toBe(2)
    expect(fake.modelRequests.at(-1)!.authorization).toBe('Bearer sk-user')
  })

  it('keeps at most 100 cached lists however many keys it sees, dropping the least recently used', async () => {
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server' } })
    await listModels(config, 'sk-first')
    for (let index = 0; index < 100; index++) await listModels(config, `sk-many-${index}`)
    const before = fake.modelRequests.length
    await listModels(config, 'sk-many-99')
    expect(fake.modelRequests.length).toBe(before)
    await listModels(config, 'sk-first')
    expect(fake.modelRequests.length).toBe(before + 1)
  })

  it('keeps the demo model and explains the problem when the upstream is unreachable', async () => {
    const port = await freePort()
    const config = testServerConfig({ openrouter: { baseUrl: `http://127.0.0.1:${port}/v1`, retryBaseDelayMs: 1 } })
    const catalog = await listModels(config)
    expect(catalog.source).toBe('demo')
    expect(catalog.models.map(model => model.id)).toEqual(['or3/offline-demo'])
    expect(catalog.error).toMatch(/^Could not load models: 127\.0\.0\.1:\d+: could not connect/)
  })

  it('lists nothing when the demo model is off and there is no key', async () => {
    const catalog = await listModels(testServerConfig({ demoModel: { enabled: false } }))
    expect(catalog.models).toEqual([])
  })
})
