/** Tool credentials: declared needs checked before a call, each user's values sealed and theirs alone, server-wide values under them. */
import { afterEach, describe, expect, it } from 'vitest'
import { CredentialInputError, CredentialVault } from '../../../../server/lib/tools/credentials/vault'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'
import { clearServerTools, registerServerTool } from '../../../../server/lib/tools/registry'
import { createSecretBox } from '../../../../server/lib/security/secret-box'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'

afterEach(() => clearServerTools())

function vault(settings = createMemoryAccountBackend()) {
  return new CredentialVault({
    settings,
    secretBox: createSecretBox('a-test-server-secret-of-enough-length', 'tool-credentials'),
    serverWide: { weather: { key: 'server-weather-key' } },
    needs: () => [{ tool: 'github_issues', need: 'github/token' }, { tool: 'forecast', need: 'weather' }],
  })
}

describe('tool credentials', () => {
  it('ends a call whose declared credential is not set with what to set where, and runs it once it is', async () => {
    registerServerTool({ type: 'function', function: { name: 'github_issues', parameters: { type: 'object', properties: {} } }, requiresCredentials: ['github/token'] }, (_args, context) => `token of ${context.credentials.get('github', 'token')!.length} characters`)
    expect(() => registerServerTool({ type: 'function', function: { name: 'bad_needs', parameters: { type: 'object', properties: {} } }, requiresCredentials: ['GitHub Token'] }, () => '')).toThrow(/requiresCredentials/)

    const settings = createMemoryAccountBackend()
    const credentials = vault(settings)
    const refused = await executeServerTool('github_issues', '{}', { userId: 'ada', credentials: await credentials.forUser('ada') })
    expect(refused).toMatchObject({ errorCode: 'credentials_missing', error: expect.stringContaining('needs the credential "github/token", which is not set') })
    expect(refused.error).toContain('/settings#credentials')

    await credentials.set('ada', 'github', { token: 'ghp_adas_secret' })
    expect(await executeServerTool('github_issues', '{}', { userId: 'ada', credentials: await credentials.forUser('ada') })).toMatchObject({ result: 'token of 15 characters' })
    // Bob does not get Ada's.
    expect(await executeServerTool('github_issues', '{}', { userId: 'bob', credentials: await credentials.forUser('bob') })).toMatchObject({ errorCode: 'credentials_missing' })
    // Sealed in the store.
    expect(await settings.getSetting('credentials:ada')).not.toContain('ghp_adas_secret')
  })

  it('lists what tools need and which keys are set where, never the values; changes, removes and deletes a user\'s', async () => {
    const credentials = vault()
    expect(await credentials.describe('ada')).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: null }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'server' }] },
    ])
    // Server-wide values show as set by the server for the keys a tool names; a user's own shadow them.
    expect((await credentials.forUser('ada')).get('weather', 'key')).toBe('server-weather-key')
    await credentials.set('ada', 'weather', { key: 'adas-weather-key' })
    expect((await credentials.forUser('ada')).get('weather', 'key')).toBe('adas-weather-key')
    expect((await credentials.forUser('bob')).get('weather', 'key')).toBe('server-weather-key')
    const listed = await credentials.set('ada', 'github', { token: 'ghp_1', user: 'ada-l' })
    expect(listed).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'mine' }, { key: 'user', set: 'mine' }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'mine' }] },
    ])
    expect(JSON.stringify(listed)).not.toContain('ghp_1')

    // An empty value removes a key; remove drops the service; bad names and sizes are 400s.
    await credentials.set('ada', 'github', { user: '' })
    expect((await credentials.forUser('ada')).get('github', 'user')).toBeUndefined()
    await expect(credentials.set('ada', 'Not A Service', { token: 'x' })).rejects.toBeInstanceOf(CredentialInputError)
    await expect(credentials.set('ada', 'github', { token: 'x'.repeat(9_000) })).rejects.toThrow(/8192/)
    await credentials.remove('ada', 'github')
    expect((await credentials.forUser('ada')).has('github')).toBe(false)
    await credentials.deleteUser('ada')
    expect((await credentials.forUser('ada')).get('weather', 'key')).toBe('server-weather-key')
  })

  it('lets an admin set a value for everyone: under each person\'s own, over the operator\'s', async () => {
    const settings = createMemoryAccountBackend()
    const credentials = vault(settings)
    await credentials.setForEveryone('github', { token: 'team-token' })
    expect((await credentials.forUser('bob')).get('github', 'token')).toBe('team-token')
    await credentials.set('ada', 'github', { token: 'adas-own' })
    expect((await credentials.forUser('ada')).get('github', 'token')).toBe('adas-own')
    await credentials.setForEveryone('weather', { key: 'team-weather' })
    expect((await credentials.forUser('bob')).get('weather', 'key')).toBe('team-weather')
    expect(await credentials.describe('bob')).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'everyone' }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'everyone' }] },
    ])
    expect((await credentials.describeForEveryone())[0]).toEqual({ service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'everyone' }] })
    expect(JSON.stringify(await settings.getSetting('credentials:*everyone'))).not.toContain('team-token')
    await credentials.removeForEveryone('github')
    expect((await credentials.forUser('bob')).has('github')).toBe(false)
  })
})

describe('credentials for a group', () => {
  it('gives a group\'s values to its members under their own and over everyone\'s, says which group, and follows the group when it is renamed or deleted', async () => {
    const settings = createMemoryAccountBackend()
    const memberships: Record<string, string[]> = { ada: ['Sales', 'Ops'], bob: [] }
    const credentials = new CredentialVault({
      settings,
      secretBox: createSecretBox('a-test-server-secret-of-enough-length', 'tool-credentials'),
      serverWide: { weather: { key: 'server-weather-key' } },
      needs: () => [{ tool: 'github_issues', need: 'github/token' }, { tool: 'forecast', need: 'weather' }],
      groupsOf: async userId => memberships[userId] ?? [],
    })
    await credentials.setForEveryone('github', { token: 'everyone-token' })
    await credentials.setForGroup('sales', 'github', { token: 'sales-token' })
    await credentials.setForGroup('Ops', 'github', { token: 'ops-token' })
    await credentials.setForGroup('Ops', 'weather', { key: 'ops-weather' })
    // Groups by name: Ops before Sales; a person's own value first.
    expect((await credentials.forUser('ada')).get('github', 'token')).toBe('ops-token')
    expect((await credentials.forUser('ada')).get('weather', 'key')).toBe('ops-weather')
    expect((await credentials.forUser('bob')).get('github', 'token')).toBe('everyone-token')
    expect((await credentials.forUser('bob')).get('weather', 'key')).toBe('server-weather-key')
    await credentials.set('ada', 'github', { token: 'adas-own' })
    expect((await credentials.forUser('ada')).get('github', 'token')).toBe('adas-own')
    expect(await credentials.describe('ada')).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'mine' }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'group', group: 'Ops' }] },
    ])
    // The admin's view of a group's values.
    expect(await credentials.describeForGroup('SALES')).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'group' }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'server' }] },
    ])
    // Sealed like a person's.
    expect(await settings.getSetting('credentials:*group:sales')).not.toContain('sales-token')

    // Renamed, the values move; deleted, they go (a new group of the old name starts with none).
    await credentials.groupChanged({ renamed: 'Ops', to: 'Operations' })
    memberships.ada = ['Operations']
    await credentials.remove('ada', 'github')
    expect((await credentials.forUser('ada')).get('github', 'token')).toBe('ops-token')
    expect(await credentials.describeForGroup('Ops')).toEqual([
      { service: 'github', tools: ['github_issues'], keys: [{ key: 'token', set: 'everyone' }] },
      { service: 'weather', tools: ['forecast'], keys: [{ key: 'key', set: 'server' }] },
    ])
    await credentials.groupChanged({ removed: 'Operations' })
    expect((await credentials.forUser('ada')).get('github', 'token')).toBe('everyone-token')
    await credentials.removeForGroup('sales', 'github')
    expect(await credentials.describeForGroup('sales')).toEqual(await credentials.describeForGroup('nobody'))
  })
})
