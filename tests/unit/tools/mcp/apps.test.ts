/**
 * MCP Apps against a real MCP server with an app (tests/fixtures/mcp/app-server.mjs): a tool's page
 * link and who may call it, the page read and bounded, the CSP it is served with, and the calls a
 * page makes, each checked by the person's policy and approvals.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { McpServers } from '../../../../server/lib/tools/mcp/servers'
import { McpApps, McpAppError } from '../../../../server/lib/tools/mcp/app-calls'
import { appLinkOf, appPageHeaders, appPageOf } from '../../../../server/lib/tools/mcp/apps'
import { clearServerTools, getEnabledDefinitions, getServerTool } from '../../../../server/lib/tools/registry'
import { policyDenial, policyNeedsApproval, type PolicyPrincipal } from '../../../../server/lib/tools/policy/rules'
import { memoryLimiters } from '../../../../server/lib/stores/rate-limits/limiters'
import type { ToolAccessCheck } from '../../../../server/lib/tools/policy/tool-policy'
import type { ToolPolicyRule } from '../../../../shared/types/tool-policy'
import { counterAppOverStdio } from '../../../support/mcp-servers'

const logger = { info: () => {}, warn: () => {} }
const servers = new McpServers({ logger, connectTimeoutMs: 20_000, retry: { baseDelayMs: 50, maxDelayMs: 200, breakerAfter: 100, breakerCooldownMs: 60_000 } })
const rules: ToolPolicyRule[] = [
  { effect: 'approve', tools: ['apps__reset_counter'] },
  { effect: 'deny', tools: ['apps__secret_numbers'] },
]
const accessFor = async (userId: string): Promise<ToolAccessCheck> => {
  const principal: PolicyPrincipal = { userId, role: 'user' }
  return Object.assign((tool: Parameters<ToolAccessCheck>[0]) => policyDenial(rules, principal, tool), { needsApproval: (tool: Parameters<ToolAccessCheck>[0]) => policyNeedsApproval(rules, principal, tool) })
}
const apps = new McpApps({ channel: name => servers.appChannel(name), credentialsFor: async () => ({ get: () => undefined, has: () => false }), accessFor, limiterFor: memoryLimiters, callsPerMinute: 5, timeoutMs: 10_000 })

beforeAll(async () => {
  clearServerTools()
  await servers.apply([{ config: counterAppOverStdio(), origin: 'file' }])
  await vi.waitFor(() => expect(servers.statuses()[0]!.state).toBe('ready'), { timeout: 20_000, interval: 50 })
})
afterAll(async () => {
  await servers.close()
  clearServerTools()
})

describe('an MCP server with an app', () => {
  it('marks every tool of a server for some groups with them', async () => {
    const forFinance = new McpServers({ logger, connectTimeoutMs: 20_000 })
    await forFinance.apply([{ config: { ...counterAppOverStdio('ledger'), groups: ['Finance'] }, origin: 'file' }])
    await vi.waitFor(() => expect(forFinance.statuses()[0]!.state).toBe('ready'), { timeout: 20_000, interval: 50 })
    expect(getServerTool('ledger__show_counter')?.groups).toEqual(['Finance'])
    expect(getServerTool('apps__show_counter')?.groups).toBeUndefined()
    await forFinance.close()
  })

  it('links the tool to its page; a tool only the app may call is kept but never offered to a model', () => {
    expect(getServerTool('apps__show_counter')?.app).toEqual({ server: 'apps', tool: 'show_counter', resourceUri: 'ui://counter/view', visibility: ['model', 'app'] })
    expect(getServerTool('apps__increment')).toMatchObject({ enabled: false, app: { visibility: ['app'] } })
    const offered = getEnabledDefinitions().map(tool => tool.function.name)
    expect(offered).toContain('apps__show_counter')
    expect(offered).not.toContain('apps__increment')
    expect(apps.hasPage('apps__show_counter')).toBe(true)
    expect(apps.hasPage('apps__reset_counter')).toBe(false)
  })

  it('reads the page through the person\'s connection, keeping only the origins it may declare', async () => {
    const page = await apps.page('ana', 'apps__show_counter')
    expect(page.html).toContain('Count: <output id="count">')
    expect(page.csp).toEqual({ connectDomains: ['https://api.example.com'], resourceDomains: [], frameDomains: [] })
    expect(page.prefersBorder).toBe(true)
    await expect(apps.page('ana', 'apps__reset_counter')).rejects.toMatchObject({ statusCode: 404 })
  })

  it('answers a page\'s calls to its own server as the policy says: allowed, confirmed first, denied, not the app\'s, rate-bounded', async () => {
    expect(await apps.callTool('ana', 'apps__show_counter', 'increment', { count: 2 }, false)).toEqual({ content: [{ type: 'text', text: '{"count":3}' }], structuredContent: { count: 3 } })
    const confirm = await apps.callTool('ana', 'apps__show_counter', 'reset_counter', {}, false).catch((error: McpAppError) => error)
    expect(confirm).toBeInstanceOf(McpAppError)
    expect((confirm as McpAppError).httpAnswer()).toMatchObject({ statusCode: 409, data: { confirm: { tool: 'apps__reset_counter' } } })
    expect(await apps.callTool('ana', 'apps__show_counter', 'reset_counter', {}, true)).toMatchObject({ structuredContent: { count: 0 } })
    await expect(apps.callTool('ana', 'apps__show_counter', 'secret_numbers', {}, true)).rejects.toMatchObject({ statusCode: 403, message: expect.stringContaining('apps__secret_numbers') })
    await expect(apps.callTool('ana', 'apps__show_counter', 'calculate', {}, true)).rejects.toMatchObject({ statusCode: 403 })
    // A bad argument: the server says so, and the page gets it as a failed result.
    expect(await apps.callTool('ana', 'apps__show_counter', 'increment', { count: 'x' }, false)).toMatchObject({ isError: true })
    // Five a minute here: the next is refused with when to try again; another person is not held back.
    await apps.callTool('ana', 'apps__show_counter', 'increment', { count: 1 }, false)
    await apps.callTool('ana', 'apps__show_counter', 'increment', { count: 1 }, false)
    const limited = await apps.callTool('ana', 'apps__show_counter', 'increment', { count: 1 }, false).catch((error: McpAppError) => error)
    expect((limited as McpAppError).httpAnswer()).toMatchObject({ statusCode: 429, refusedBy: 'mcp_app_calls_user' })
    expect(await apps.callTool('ben', 'apps__show_counter', 'increment', { count: 7 }, false)).toMatchObject({ structuredContent: { count: 8 } })
  })
})

describe('an app\'s declarations', () => {
  it('reads a link only to a ui:// page, the old flat key too, and who may call', () => {
    const tool = (meta: Record<string, unknown>) => ({ name: 't', inputSchema: { type: 'object' as const }, _meta: meta })
    expect(appLinkOf('s', tool({ ui: { resourceUri: 'https://evil.example/page' } }))).toEqual({ server: 's', tool: 't', visibility: ['model', 'app'] })
    expect(appLinkOf('s', tool({ 'ui/resourceUri': 'ui://old/page' }))).toEqual({ server: 's', tool: 't', resourceUri: 'ui://old/page', visibility: ['model', 'app'] })
    expect(appLinkOf('s', tool({ ui: { visibility: ['app', 'root'] } }))).toEqual({ server: 's', tool: 't', visibility: ['app'] })
    expect(appLinkOf('s', tool({}))).toEqual({ server: 's', tool: 't', visibility: ['model', 'app'] })
  })

  it('refuses a page of another type or too large, and serves one in a sandbox with only the network it declared', () => {
    const read = (mimeType: string, text: string) => ({ contents: [{ uri: 'ui://p', mimeType, text }] })
    expect(() => appPageOf(read('application/javascript', 'x'), 'ui://p')).toThrow(/not text\/html;profile=mcp-app/)
    expect(() => appPageOf(read('text/html;profile=mcp-app', 'x'.repeat(2 * 1024 * 1024 + 1)), 'ui://p')).toThrow(/larger than/)
    const headers = appPageHeaders({ connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'], frameDomains: [] }, ['http://app.test'])
    const policy = headers['Content-Security-Policy']!
    expect(policy).toMatch(/^sandbox allow-scripts allow-forms;/)
    expect(policy).not.toContain('allow-same-origin')
    expect(policy).toContain('connect-src https://api.example.com')
    expect(policy).toContain('script-src \'unsafe-inline\' https://cdn.example.com')
    expect(policy).toContain('frame-src \'none\'')
    expect(policy).toContain('frame-ancestors http://app.test')
    expect(appPageHeaders({ connectDomains: [], resourceDomains: [], frameDomains: [] }, ['http://app.test'])['Content-Security-Policy']).toContain('connect-src \'none\'')
  })
})
