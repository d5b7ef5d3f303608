/**
 * OAuth-protected MCP servers: each person authorises with their own account, calls carry their
 * token, an expiring token is refreshed once however many calls (and instances) need it at the
 * same time, and a refused refresh turns into "re-authorise". Against a local OAuth-protected MCP
 * server whose resource side is the SDK's own bearer-auth and metadata helpers.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { McpServers } from '../../../../server/lib/tools/mcp/servers'
import type { McpAuthorizations } from '../../../../server/lib/tools/mcp/oauth/authorizations'
import { McpOAuthFlowError } from '../../../../server/lib/tools/mcp/oauth/errors'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'
import { createSecretBox } from '../../../../server/lib/security/secret-box'
import { clearServerTools, getServerTool } from '../../../../server/lib/tools/registry'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'
import type { AccountBackend } from '../../../../server/lib/stores/accounts/account-store'
import { startOAuthMcpServer, type OAuthMcpServer } from '../../../support/oauth-mcp-server'

const logger = { info: () => {}, warn: () => {} }
const APP = 'http://app.test'
const noCredentials = { get: () => undefined, has: () => false }

let fixture: OAuthMcpServer
let store: AccountBackend
let clock: number
const open: Array<{ close: () => Promise<void> }> = []

function setUp(options: { store?: AccountBackend } = {}) {
  const servers = new McpServers({
    logger,
    connectTimeoutMs: 20_000,
    oauth: { store: options.store ?? store, secretBox: createSecretBox('test-secret-test-secret-test-secret', 'mcp-oauth-grants'), logger, now: () => clock },
  })
  open.push(servers)
  return { servers, authorizations: servers.authorizations! }
}

async function run(servers: McpServers) {
  await servers.apply([{ config: { name: 'secure', transport: 'http', url: fixture.url, headers: {}, oauth: true, enabled: true, timeoutMs: 10_000, maxTotalTimeoutMs: 20_000 }, origin: 'file' }])
}

/** Plays the browser: opens the authorization URL, follows the server's redirect back to the callback. */
async function authorise(authorizations: McpAuthorizations, userId: string, as: string) {
  fixture.approveAs(as)
  const url = await authorizations.begin(userId, 'secure', APP)
  const answer = await fetch(url, { redirect: 'manual' })
  const back = new URL(answer.headers.get('location')!)
  expect(back.origin + back.pathname).toBe(`${APP}/api/mcp-oauth/callback`)
  return authorizations.complete(userId, Object.fromEntries(back.searchParams))
}

const whoami = (userId: string) => executeServerTool('secure__whoami', '{}', { userId, credentials: noCredentials })

beforeEach(async () => {
  fixture = await startOAuthMcpServer()
  store = createMemoryAccountBackend()
  clock = Date.now()
})

afterEach(async () => {
  await Promise.all(open.splice(0).map(item => item.close()))
  clearServerTools()
  await fixture.close()
})

describe('an OAuth-protected MCP server', () => {
  it('lets each person authorise, sends each call with their own token, and tells someone who has not what to do before sending anything', async () => {
    const { servers, authorizations } = setUp()
    await run(servers)
    expect(servers.statuses()[0]).toMatchObject({ state: 'connecting', error: expect.stringContaining('Settings → Connections') })
    expect(await authorizations.list('ada')).toEqual([{ server: 'secure', state: 'not-connected' }])

    expect(await authorise(authorizations, 'ada', 'ada@idp')).toBe('secure')
    expect(fixture.stats).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 })
    expect(await authorizations.list('ada')).toEqual([{ server: 'secure', state: 'connected', connectedAt: clock }])

    await servers.discoverFor('ada', noCredentials)
    expect(getServerTool('secure__whoami')).toMatchObject({ source: { kind: 'mcp', name: 'secure' }, idempotent: true })
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })

    const rejectedBefore = fixture.stats.rejectedCalls
    const bob = await whoami('bob')
    expect(bob).toMatchObject({ errorCode: 'execution_failed' })
    expect(bob.error).toMatch(/MCP server "secure" needs the user's authorisation.*Settings → Connections \(\/settings#connections\)/)
    expect(fixture.stats.rejectedCalls).toBe(rejectedBefore)
    expect((await servers.authorizationNotes('bob')).get('secure')).toMatch(/Connect your account/)
    expect((await servers.authorizationNotes('ada')).has('secure')).toBe(false)

    await authorise(authorizations, 'bob', 'bob@idp')
    expect(await whoami('bob')).toMatchObject({ result: 'authorised as bob@idp' })
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })

    // The grant is sealed in the store: no token in plain text.
    const sealed = await store.getSetting('mcp-oauth:ada:secure')
    expect(sealed).toMatch(/^v1\./)
    expect(sealed).not.toMatch(/access_token|refresh_token/)

    await authorizations.disconnect('ada', 'secure')
    expect((await whoami('ada')).error).toMatch(/needs the user's authorisation/)
    await authorizations.deleteUser('bob')
    expect(await store.getSetting('mcp-oauth:bob:secure')).toBeNull()
  }, 60_000)

  it('asks the person to re-authorise with the wider scope when the server wants more (step-up), without retrying behind their back', async () => {
    const { servers, authorizations } = setUp()
    await run(servers)
    await authorise(authorizations, 'ada', 'ada@idp')
    // No scope configured and none in the challenge: the first authorisation asks for the metadata's scopes_supported.
    expect(fixture.askedScopes).toEqual(['tools'])
    await servers.discoverFor('ada', noCredentials)
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })

    fixture.requireScope('files:write')
    const refused = await whoami('ada')
    expect(refused).toMatchObject({ result: null, error: expect.stringMatching(/MCP server "secure" needs more access than the user authorised \(scope "tools files:write"\)\. Tell the user to re-authorise it in Settings → Connections/) })
    expect(await authorizations.list('ada')).toEqual([expect.objectContaining({ server: 'secure', state: 'reauthorize', scope: 'tools files:write', problem: expect.stringContaining('files:write') })])
    // Until the person acts, calls are refused before anything is sent (no loop of 403s).
    const rejectedBefore = fixture.stats.rejectedCalls
    expect((await whoami('ada')).error).toMatch(/needs more access/)
    expect(fixture.stats.rejectedCalls).toBe(rejectedBefore)

    // Re-authorising asks for what they had plus what the server named, and the call goes through.
    await authorise(authorizations, 'ada', 'ada@idp')
    expect(fixture.askedScopes.at(-1)).toBe('tools files:write')
    expect(await authorizations.list('ada')).toEqual([expect.objectContaining({ server: 'secure', state: 'connected' })])
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })
  })

  it('refreshes an expiring token once for many parallel calls, and once after the server stops accepting it', async () => {
    const { servers, authorizations } = setUp()
    await run(servers)
    await authorise(authorizations, 'ada', 'ada@idp')
    await servers.discoverFor('ada', noCredentials)
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })

    // Our clock says the hour is nearly over: the next calls need a fresh token.
    clock += 3_590_000
    fixture.setTokenDelay(200)
    const results = await Promise.all(Array.from({ length: 8 }, () => whoami('ada')))
    for (const result of results) expect(result).toMatchObject({ result: 'authorised as ada@idp' })
    expect(fixture.stats).toMatchObject({ refreshes: 1, refreshReuse: 0 })

    // The server drops every token it issued (an early expiry): a 401, one refresh, the call goes through.
    fixture.expireAccessTokens()
    const again = await Promise.all(Array.from({ length: 4 }, () => whoami('ada')))
    for (const result of again) expect(result).toMatchObject({ result: 'authorised as ada@idp' })
    expect(fixture.stats).toMatchObject({ refreshes: 2, refreshReuse: 0 })
  }, 60_000)

  it('refreshes once when two instances on one store need a fresh token at the same time', async () => {
    const one = setUp()
    const two = setUp()
    await Promise.all([run(one.servers), run(two.servers)])
    await authorise(one.authorizations, 'ada', 'ada@idp')
    clock += 3_590_000
    fixture.setTokenDelay(300)
    const tokens = await Promise.all([one.authorizations.accessToken('ada', 'secure'), two.authorizations.accessToken('ada', 'secure'), one.authorizations.accessToken('ada', 'secure'), two.authorizations.accessToken('ada', 'secure')])
    expect(new Set(tokens).size).toBe(1)
    expect(fixture.stats).toMatchObject({ refreshes: 1, refreshReuse: 0 })
    // The instance that did not refresh waited for the lock and used what the other saved.
    expect(one.authorizations.stats.refreshes + two.authorizations.stats.refreshes).toBe(1)
    expect(one.authorizations.stats.refreshWaits + two.authorizations.stats.refreshWaits).toBeGreaterThan(0)
  }, 60_000)

  it('asks the person to re-authorise when the refresh is refused, and works again once they do', async () => {
    const { servers, authorizations } = setUp()
    await run(servers)
    await authorise(authorizations, 'ada', 'ada@idp')
    await servers.discoverFor('ada', noCredentials)
    fixture.revokeRefreshTokens()
    clock += 3_590_000

    const refused = await whoami('ada')
    expect(refused).toMatchObject({ errorCode: 'execution_failed' })
    expect(refused.error).toMatch(/authorisation for MCP server "secure" expired or was revoked \(invalid_grant.*re-authorise it in Settings → Connections \(\/settings#connections\)/)
    expect(await authorizations.list('ada')).toEqual([{ server: 'secure', state: 'reauthorize', connectedAt: expect.any(Number), problem: expect.stringMatching(/invalid_grant/) }])
    expect((await servers.authorizationNotes('ada')).get('secure')).toMatch(/re-authorise/)
    // Later calls are refused at once, without another refresh attempt.
    expect((await whoami('ada')).error).toMatch(/re-authorise/)

    await authorise(authorizations, 'ada', 'ada@idp')
    expect(await authorizations.list('ada')).toEqual([{ server: 'secure', state: 'connected', connectedAt: clock }])
    expect(await whoami('ada')).toMatchObject({ result: 'authorised as ada@idp' })
  }, 60_000)

  it('refuses a callback it did not start, and records a refusal by the authorization server', async () => {
    const { servers, authorizations } = setUp()
    await run(servers)
    await expect(authorizations.complete('ada', { state: 'secure.forged', code: 'x' })).rejects.toThrow(/not \(or no longer\) the one you started/)
    const url = await authorizations.begin('ada', 'secure', APP)
    const state = url.searchParams.get('state')!
    // Another person cannot finish Ada's authorisation.
    await expect(authorizations.complete('bob', { state, code: 'x' })).rejects.toBeInstanceOf(McpOAuthFlowError)
    await expect(authorizations.complete('ada', { state, error: 'access_denied', error_description: 'The user said no' })).rejects.toThrow(/was not connected.*The user said no/)
    expect(await authorizations.list('ada')).toEqual([{ server: 'secure', state: 'not-connected', problem: expect.stringMatching(/The user said no/) }])
    // The state was used up.
    await expect(authorizations.complete('ada', { state, code: 'x' })).rejects.toThrow(/not \(or no longer\)/)
    await expect(authorizations.begin('ada', 'nope', APP)).rejects.toThrow(/no MCP server "nope"/)
  }, 60_000)
})
