import { fileURLToPath } from 'node:url'
import { $fetch, fetch, setup } from '@nuxt/test-utils/e2e'
import { describe, expect, it } from 'vitest'

interface ToolSummary {
  name: string
  description: string
  runtime: string
  parameters: { type: string, properties: Record<string, unknown>, required?: string[] }
}

describe('the built app', async () => {
  await setup({ rootDir: fileURLToPath(new URL('../..', import.meta.url)), server: true, browser: false })

  it('GET /api/tools lists the enabled tools with name, description, parameters and runtime', async () => {
    const { tools } = await $fetch<{ tools: ToolSummary[] }>('/api/tools')
    expect(tools.map(tool => tool.name)).toEqual(['get_current_time', 'calculate', 'get_current_weather', 'convert_units'])
    for (const tool of tools) {
      expect(Object.keys(tool).sort()).toEqual(['description', 'name', 'parameters', 'runtime'])
      expect(tool.parameters.type).toBe('object')
      expect(tool.runtime).toBe('hybrid')
    }
    expect(tools.find(tool => tool.name === 'get_current_weather')!.parameters.required).toEqual(['location'])
    expect(tools.find(tool => tool.name === 'calculate')!.parameters.properties).toHaveProperty('expression')
  })

  it('serves a page at / that lists the tools', async () => {
    const response = await fetch('/')
    expect(response.status).toBe(200)
    const html = await response.text()
    expect(html).toMatch(/<html\s+lang="en"/)
    for (const name of ['get_current_time', 'calculate', 'get_current_weather', 'convert_units']) {
      expect(html).toContain(`>${name}<`)
    }
  })

  it('answers an unknown API route with 404, not a page', async () => {
    const response = await fetch('/api/does-not-exist')
    expect(response.status).toBe(404)
  })
})
