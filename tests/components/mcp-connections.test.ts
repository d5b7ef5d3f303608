/** Settings → Connections: each OAuth server with the person's state and the button that fits it. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import McpConnections from '../../app/components/McpConnections.vue'

const calls: Array<{ url: string, method?: string }> = []

afterEach(() => {
  calls.length = 0
  vi.unstubAllGlobals()
})

function stubFetch(servers: unknown[], consents: unknown[] = []) {
  vi.stubGlobal('$fetch', async (url: string, options: { method?: string, body?: unknown } = {}) => {
    calls.push({ url, method: options.method, ...(options.body ? { body: options.body } : {}) })
    if (url === '/api/mcp-oauth') return { servers }
    if (url === '/api/mcp-consents') return { servers: consents }
    if (url.startsWith('/api/mcp-consents/')) return { servers: [{ ...(consents[0] as object), allowed: options.method === 'PUT' }] }
    if (options.method === 'DELETE') return { servers: [{ server: 'github', state: 'not-connected' }] }
    return { authorizationUrl: 'https://idp.example/authorize?x=1' }
  })
}

describe('MCP connections in settings', () => {
  it('offers Connect, Re-authorise (with the reason) or Disconnect, and disconnects', async () => {
    stubFetch([
      { server: 'github', state: 'connected', connectedAt: Date.UTC(2026, 10, 1) },
      { server: 'linear', state: 'reauthorize', problem: 'invalid_grant: refresh token revoked' },
      { server: 'notion', state: 'not-connected' },
    ])
    const wrapper = mount(McpConnections, { props: { canConnect: true } })
    await flushPromises()
    expect(wrapper.find('[data-testid=connection-github]').attributes('data-state')).toBe('connected')
    expect(wrapper.find('[data-testid=connection-linear]').text()).toMatch(/needs re-authorising[\s\S]*refresh token revoked/)
    expect(wrapper.find('[data-testid=connect-linear]').text()).toBe('Re-authorise')
    expect(wrapper.find('[data-testid=connect-notion]').text()).toBe('Connect')
    expect(wrapper.find('[data-testid=connect-github]').exists()).toBe(false)
    await wrapper.find('[data-testid=connection-github] button').trigger('click')
    await flushPromises()
    expect(calls.at(-1)).toEqual({ url: '/api/mcp-oauth/github', method: 'DELETE' })
    expect(wrapper.find('[data-testid=connection-github]').attributes('data-state')).toBe('not-connected')
  })

  it('asks before an admin\'s server gets the person\'s credentials, showing where they go, and allows that address with those credentials', async () => {
    stubFetch([], [{ server: 'gh', target: 'https://mcp.example.com', credentials: ['github/token'], allowed: false }])
    const wrapper = mount(McpConnections, { props: { canConnect: true } })
    await flushPromises()
    const row = wrapper.find('[data-testid=consent-gh]')
    expect(row.attributes('data-allowed')).toBe('false')
    expect(row.text()).toMatch(/sends your github\/token to https:\/\/mcp.example.com/)
    await wrapper.find('[data-testid=allow-gh]').trigger('click')
    await flushPromises()
    expect(calls.at(-1)).toEqual({ url: '/api/mcp-consents/gh', method: 'PUT', body: { target: 'https://mcp.example.com', credentials: ['github/token'] } })
    expect(wrapper.find('[data-testid=consent-gh]').attributes('data-allowed')).toBe('true')
  })

  it('lets guests see the servers but not connect', async () => {
    stubFetch([{ server: 'notion', state: 'not-connected' }])
    const wrapper = mount(McpConnections, { props: { canConnect: false } })
    await flushPromises()
    expect(wrapper.find('[data-testid=connect-notion]').attributes('disabled')).toBeDefined()
    expect(wrapper.text()).toMatch(/Sign in to connect/)
  })
})
