/**
 * An MCP server whose env names a person's credential: one connection per person with their own
 * value (never someone else's), tools listed through the first, closed when idle; a server-wide
 * value makes one shared connection instead. Against a real stdio server on the official SDK.
 */
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { McpServers } from '../../../../server/lib/tools/mcp/servers'
import { McpPerUserServer } from '../../../../server/lib/tools/mcp/per-user'
import { clearServerTools, getServerTool } from '../../../../server/lib/tools/registry'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'
import type { ToolCredentials } from '../../../../server/lib/tools/tool-types'
import { McpCredentialConsents } from '../../../../server/lib/tools/mcp/consents'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'

const logger = { info: () => {}, warn: () => {} }
const fixture = fileURLToPath(new URL('../../../fixtures/mcp/whoami-server.mjs', import.meta.url))
const config = { name: 'gh', transport: 'stdio' as const, command: process.execPath, args: [fixture], env: { USER_TOKEN: '${credentials:github/token}' }, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 10_000 }
const open: McpServers[] = []

function tokens(values: Record<string, string>): ToolCredentials {
  return { get: (service, key) => values[`${service}/${key}`], has: service => Object.keys(values).some(need => need.startsWith(`${service}/`)) }
}

afterEach(async () => {
  await Promise.all(open.splice(0).map(servers => servers.close()))
  clearServerTools()
})

describe('an MCP server that uses each person\'s credentials', () => {
  it('connects per person with their own value, lists its tools through the first, refuses those without one, and closes idle connections', async () => {
    let clock = 0
    const servers = new McpServers({ logger, connectTimeoutMs: 20_000, userConnectionIdleMs: 100, now: () => clock })
    open.push(servers)
    await servers.apply([{ config, origin: 'file' }])
    expect(servers.statuses()[0]).toMatchObject({ state: 'connecting', tools: 0, error: expect.stringContaining('"github/token"') })

    // Someone without the credential opens Settings: nothing is connected.
    await servers.discoverFor('carol', tokens({}))
    expect((servers.get('gh') as McpPerUserServer).connections).toBe(0)

    const ada = tokens({ 'github/token': 'ada-token' })
    await servers.discoverFor('ada', ada)
    expect(getServerTool('gh__whoami')).toMatchObject({ requiresCredentials: ['github/token'], source: { kind: 'mcp', name: 'gh' } })
    expect(servers.statuses()[0]).toMatchObject({ state: 'ready', tools: 1 })

    expect(await executeServerTool('gh__whoami', '{}', { userId: 'ada', credentials: ada })).toMatchObject({ result: 'token ada-token' })
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'bob', credentials: tokens({ 'github/token': 'bob-token' }) })).toMatchObject({ result: 'token bob-token' })
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'ada', credentials: ada })).toMatchObject({ result: 'token ada-token' })
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'carol', credentials: tokens({}) })).toMatchObject({ errorCode: 'credentials_missing' })
    // A changed value opens a new connection with it.
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'ada', credentials: tokens({ 'github/token': 'ada-new' }) })).toMatchObject({ result: 'token ada-new' })
    expect((servers.get('gh') as McpPerUserServer).connections).toBe(2)

    // Unused past the idle time (the sweep runs every 100 ms of real time; the clock says how long they were idle).
    clock += 1_000
    await vi.waitFor(() => expect((servers.get('gh') as McpPerUserServer).connections).toBe(0), { timeout: 30_000, interval: 50 })
    // The tools stay offered; the next call opens a connection again.
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'bob', credentials: tokens({ 'github/token': 'bob-token' }) })).toMatchObject({ result: 'token bob-token' })
  }, 60_000)

  it('sends a person\'s credential to a server an admin added only after they allowed it at its address; a new address asks again', async () => {
    const consents = new McpCredentialConsents(createMemoryAccountBackend())
    const servers = new McpServers({ logger, connectTimeoutMs: 20_000, consents })
    open.push(servers)
    await servers.apply([{ config, origin: 'admin' }])
    const ada = tokens({ 'github/token': 'ada-token' })
    const target = `${process.execPath} ${fixture}`
    expect(servers.consentServers()).toEqual([{ name: 'gh', target, needs: ['github/token'] }])
    // Not allowed: nothing is connected, nothing sent.
    await servers.discoverFor('ada', ada)
    expect((servers.get('gh') as McpPerUserServer).connections).toBe(0)
    await consents.allow('ada', 'gh', target, ['github/token'])
    await servers.discoverFor('ada', ada)
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'ada', credentials: ada })).toMatchObject({ result: 'token ada-token' })
    // Bob has not allowed it: his call is refused before anything is sent, saying where to allow it.
    const bob = await executeServerTool('gh__whoami', '{}', { userId: 'bob', credentials: tokens({ 'github/token': 'bob-token' }) })
    expect(bob.error).toMatch(/added by an admin.*would send your "github\/token" credential there.*Settings → Connections/)
    expect((servers.get('gh') as McpPerUserServer).connections).toBe(1)
    // The admin adds another of her credentials at the same address: her consent was for github/token only.
    await servers.apply([{ config: { ...config, env: { ...config.env, OTHER: '${credentials:svc/b}' } }, origin: 'admin' }])
    await vi.waitFor(() => expect(servers.consentServers()[0]!.needs).toEqual(['github/token', 'svc/b']), { timeout: 30_000, interval: 20 })
    expect(await consents.allowed('ada', 'gh', target, ['github/token', 'svc/b'])).toBe(false)
    const adaBoth = tokens({ 'github/token': 'ada-token', 'svc/b': 'ada-b' })
    // Nothing is connected for her (so nothing is sent) until she allows the wider set.
    await servers.discoverFor('ada', adaBoth)
    expect((servers.get('gh') as McpPerUserServer).connections).toBe(0)
    await consents.allow('ada', 'gh', target, ['github/token', 'svc/b'])
    await servers.discoverFor('ada', adaBoth)
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'ada', credentials: adaBoth })).toMatchObject({ result: 'token ada-token' })
    // The admin narrowing it again keeps her consent.
    expect(await consents.allowed('ada', 'gh', target, ['github/token'])).toBe(true)
    // The admin points it elsewhere: Ada's consent was for the old address.
    await servers.apply([{ config: { ...config, args: [fixture, '--elsewhere'] }, origin: 'admin' }])
    await vi.waitFor(() => expect(getServerTool('gh__whoami')).toBeUndefined(), { timeout: 30_000, interval: 20 })
    expect(servers.consentServers()[0]!.target).toBe(`${target} --elsewhere`)
    expect(await consents.allowed('ada', 'gh', `${target} --elsewhere`, ['github/token'])).toBe(false)
    await consents.withdraw('ada', 'gh')
    expect(await consents.allowed('ada', 'gh', target, ['github/token'])).toBe(false)
  }, 60_000)

  it('reports a person\'s failing connection in its state (failures, the reason) instead of "0 failures"', async () => {
    const servers = new McpServers({ logger, connectTimeoutMs: 20_000, retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, breakerAfter: 8, breakerCooldownMs: 60_000 } })
    open.push(servers)
    await servers.apply([{ config, origin: 'file' }])
    await servers.discoverFor('ada', tokens({ 'github/token': 'ada-token' }))
    const eve = await executeServerTool('gh__whoami', '{}', { userId: 'eve', credentials: tokens({ 'github/token': 'revoked' }) })
    expect(eve).toMatchObject({ errorCode: 'unavailable', error: expect.stringMatching(/unavailable \(.*this token was revoked\)/) })
    expect(servers.statuses()[0]).toMatchObject({ state: 'ready', failures: 1, error: expect.stringMatching(/^1 of 2 people's connections are failing: .*this token was revoked/) })
  }, 60_000)

  it('shares one connection when the server-wide credentials fill every placeholder', async () => {
    const servers = new McpServers({ logger, connectTimeoutMs: 20_000, serverCredentials: tokens({ 'github/token': 'shared-token' }) })
    open.push(servers)
    await servers.apply([{ config, origin: 'file' }])
    await vi.waitFor(() => expect(servers.statuses()[0]).toMatchObject({ state: 'ready', tools: 1 }), { timeout: 20_000, interval: 50 })
    expect(getServerTool('gh__whoami')!.requiresCredentials).toEqual([])
    expect(await executeServerTool('gh__whoami', '{}', { userId: 'anyone' })).toMatchObject({ result: 'token shared-token' })
  }, 60_000)
})
