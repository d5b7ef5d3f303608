/**
 * MCP servers an admin adds in the UI, against the real server-everything over Streamable HTTP:
 * saved with their secrets sealed, shown masked, run at once, kept when a mask is sent back,
 * refused with words that say what to fix, removed, and picked up by another instance.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { McpAdminError, McpServerCatalog } from '../../../../server/lib/tools/mcp/admin-servers'
import { McpServers } from '../../../../server/lib/tools/mcp/servers'
import { clearServerTools, getServerTool } from '../../../../server/lib/tools/registry'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'
import { createSecretBox } from '../../../../server/lib/security/secret-box'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'
import { everythingOverStdio, startEverythingOverHttp } from '../../../support/mcp-servers'

const logger = { info: () => {}, warn: () => {} }
const secretBox = createSecretBox('a-test-server-secret-of-enough-length', 'mcp-server-secrets')
let remote: Awaited<ReturnType<typeof startEverythingOverHttp>>
const open: Array<{ servers: McpServers, catalog: McpServerCatalog }> = []

beforeAll(async () => {
  remote = await startEverythingOverHttp()
}, 30_000)
afterAll(() => remote?.stop())
beforeEach(() => clearServerTools())
afterEach(async () => {
  for (const { servers, catalog } of open.splice(0)) {
    catalog.close()
    await servers.close()
  }
  clearServerTools()
})

function instance(settings: ReturnType<typeof createMemoryAccountBackend>, options: { commandsAllowed?: boolean, fileServers?: ReturnType<typeof everythingOverStdio>[] } = {}) {
  const servers = new McpServers({ logger, connectTimeoutMs: 20_000, retry: { baseDelayMs: 50, maxDelayMs: 200, breakerAfter: 100, breakerCooldownMs: 60_000 } })
  const catalog = new McpServerCatalog({ servers, fileServers: options.fileServers ?? [], configFile: options.fileServers ? '/etc/or3/mcp.json' : null, settings, secretBox, commandsAllowed: options.commandsAllowed ?? false, logger, syncIntervalMs: 0 })
  open.push({ servers, catalog })
  return { servers, catalog }
}

async function refusal(action: Promise<unknown>): Promise<McpAdminError> {
  const error = await action.then(() => undefined, (error: unknown) => error)
  expect(McpAdminError.isInstance(error), String(error)).toBe(true)
  return error as McpAdminError
}

describe('MCP servers added by an admin', () => {
  it('runs a server at once, keeps its header values sealed and masked, keeps them when the mask comes back, and removes it', async () => {
    const settings = createMemoryAccountBackend()
    const { catalog } = instance(settings)
    await catalog.start()
    await catalog.put('remote', { url: remote.url, headers: { Authorization: 'Bearer sk-very-secret' }, tools: ['echo'], timeoutMs: 5_000 })
    await vi.waitFor(() => expect(getServerTool('remote__echo')).toMatchObject({ source: { kind: 'mcp', name: 'remote' } }), { timeout: 20_000, interval: 50 })
    expect(await executeServerTool('remote__echo', '{"message":"hi"}')).toMatchObject({ result: 'Echo: hi' })

    // Never stored or shown in plain text.
    const stored = await settings.getSetting('mcp-servers')
    expect(stored).not.toContain('sk-very-secret')
    const { servers } = await catalog.list()
    expect(servers).toEqual([expect.objectContaining({ name: 'remote', origin: 'admin', url: remote.url, headers: { Authorization: '••••••••' }, status: expect.objectContaining({ state: 'ready', origin: 'admin', tools: 1 }) })])
    expect(JSON.stringify(servers)).not.toContain('sk-very-secret')

    // The mask sent back keeps the saved value; a changed allowlist reconnects with it.
    await catalog.put('remote', { url: remote.url, headers: { Authorization: '••••••••' }, tools: ['echo', 'get-sum'], timeoutMs: 5_000 })
    const sealed = JSON.parse((await settings.getSetting('mcp-servers'))!).servers[0].server.headers.Authorization
    expect(secretBox.open(sealed)).toBe('Bearer sk-very-secret')
    await vi.waitFor(() => expect(getServerTool('remote__get-sum')).toBeDefined(), { timeout: 20_000, interval: 50 })

    // A new address gets none of the saved secrets back from a mask: they are entered again.
    const moved = await refusal(catalog.put('remote', { url: 'https://collector.example/mcp', headers: { Authorization: '••••••••' }, timeoutMs: 5_000 }))
    expect(moved).toMatchObject({ statusCode: 400, message: expect.stringMatching(/address changed, so the saved header Authorization is not sent to the new one/) })
    expect(secretBox.open(JSON.parse((await settings.getSetting('mcp-servers'))!).servers[0].server.headers.Authorization)).toBe('Bearer sk-very-secret')
    // The same origin on another path keeps them.
    await catalog.put('remote', { url: `${remote.url}?v=2`, headers: { Authorization: '••••••••' }, tools: ['echo'], timeoutMs: 5_000 })

    await catalog.remove('remote')
    expect(getServerTool('remote__echo')).toBeUndefined()
    expect((await catalog.list()).servers).toEqual([])
  }, 60_000)

  it('refuses what it cannot take, saying what to fix', async () => {
    const settings = createMemoryAccountBackend()
    const { catalog } = instance(settings, { fileServers: [everythingOverStdio('everything')] })
    await catalog.start()
    expect(await refusal(catalog.put('everything', { url: remote.url }))).toMatchObject({ statusCode: 409, message: expect.stringContaining('/etc/or3/mcp.json') })
    expect(await refusal(catalog.put('local', { command: 'npx', args: ['-y', 'something'] }))).toMatchObject({ statusCode: 403, message: expect.stringContaining('NUXT_MCP_ADMIN_COMMANDS') })
    expect(await refusal(catalog.put('bad name!', { url: remote.url }))).toMatchObject({ statusCode: 400 })
    expect(await refusal(catalog.put('web', { url: 'ftp://example.com' }))).toMatchObject({ statusCode: 400 })
    expect(await refusal(catalog.put('web', { url: remote.url, timeoutMs: 5 }))).toMatchObject({ statusCode: 400, message: expect.stringContaining('timeoutMs') })
    expect(await refusal(catalog.put('web', { url: remote.url, tools: 'echo' }))).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^tools: .*expected array, received string$/) })
    expect(await refusal(catalog.put('web', { url: remote.url, headers: { Authorization: '••••••••' } }))).toMatchObject({ statusCode: 400, message: expect.stringContaining('no saved value') })
    expect(await refusal(catalog.remove('everything'))).toMatchObject({ statusCode: 409 })
    expect(await refusal(catalog.remove('nothing'))).toMatchObject({ statusCode: 404 })
    expect(await settings.getSetting('mcp-servers')).toBeNull()
  }, 60_000)

  it('keeps an OAuth client\'s secret sealed and masked like a header, and a mask sent back keeps it', async () => {
    const settings = createMemoryAccountBackend()
    const { servers, catalog } = instance(settings)
    await catalog.start()
    const shown = await catalog.put('idp', { url: remote.url, oauth: { clientId: 'or3-chat', clientSecret: 'client-s3cret', tokenEndpointAuthMethod: 'client_secret_post' } })
    expect(shown.oauth).toEqual({ clientId: 'or3-chat', clientSecret: '••••••••', tokenEndpointAuthMethod: 'client_secret_post' })
    expect(await settings.getSetting('mcp-servers')).not.toContain('client-s3cret')
    expect(servers.oauthServers()).toEqual([{ name: 'idp', url: remote.url, client: { clientId: 'or3-chat', clientSecret: 'client-s3cret', tokenEndpointAuthMethod: 'client_secret_post' } }])
    // The admin changes the scope and sends the mask back: the secret stays.
    await catalog.put('idp', { url: remote.url, oauth: { clientId: 'or3-chat', clientSecret: '••••••••', scope: 'tools' } })
    expect(servers.oauthServers()[0]).toMatchObject({ scope: 'tools', client: { clientSecret: 'client-s3cret' } })
    // A new address does not get the old secret from a mask.
    expect(await refusal(catalog.put('idp', { url: 'https://elsewhere.example/mcp', oauth: { clientId: 'or3-chat', clientSecret: '••••••••' } }))).toMatchObject({ statusCode: 400, message: expect.stringMatching(/address changed.*OAuth setting clientSecret/) })
    expect(await refusal(catalog.put('m2m', { url: remote.url, oauth: { grant: 'client_credentials', clientId: 'or3' } }))).toMatchObject({ statusCode: 400, message: expect.stringMatching(/oauth\.clientSecret: or "privateKey" is needed/) })
  }, 60_000)

  it('lets an admin add a command where the operator allows it, with its environment sealed', async () => {
    const settings = createMemoryAccountBackend()
    const { catalog } = instance(settings, { commandsAllowed: true })
    await catalog.start()
    const { command, args } = everythingOverStdio()
    await catalog.put('local', { command, args, env: { API_TOKEN: 'tok-123' }, tools: ['echo'] })
    await vi.waitFor(() => expect(getServerTool('local__echo')).toBeDefined(), { timeout: 20_000, interval: 50 })
    expect(await settings.getSetting('mcp-servers')).not.toContain('tok-123')
    expect((await catalog.list()).servers[0]).toMatchObject({ command, env: { API_TOKEN: '••••••••' } })
  }, 60_000)

  it('shows another instance\'s change on its next sync, and a server whose secret cannot be opened as a problem', async () => {
    const settings = createMemoryAccountBackend()
    const first = instance(settings)
    await first.catalog.start()
    await first.catalog.put('remote', { url: remote.url, headers: { 'X-Key': 'abc' }, tools: ['echo'] })
    await vi.waitFor(() => expect(first.servers.statuses()[0]?.state).toBe('ready'), { timeout: 20_000, interval: 50 })
    await first.catalog.remove('remote')

    // The second instance reads what the first saved.
    await first.catalog.put('shared', { url: remote.url, tools: ['echo'] })
    const second = instance(settings)
    await second.catalog.start()
    expect(second.servers.statuses().map(status => status.name)).toEqual(['shared'])

    // Sealed under another server secret: listed with the problem, not run.
    const foreign = createSecretBox('another-server-secret-entirely-here', 'mcp-server-secrets')
    await settings.setSetting('mcp-servers', JSON.stringify({ servers: [{ name: 'moved', server: { url: remote.url, headers: { 'X-Key': foreign.seal('abc') } } }] }))
    const { servers } = await second.catalog.list()
    expect(servers).toEqual([expect.objectContaining({ name: 'moved', problem: expect.stringContaining('could not be decrypted') })])
    expect(second.servers.statuses()).toEqual([])
  }, 60_000)
})
