/**
 * SCIM provisioning against the built server, as Entra ID and Okta call it over HTTP: the bearer
 * token, a person created and looked up, a person who was here before matched and deactivated
 * (their cookie, API token and running answer end at once), a group whose provisioned member the
 * admin page shows, a hostile filter and body refused while another client is answered, and a
 * person deleted.
 */
import { describe, expect, it } from 'vitest'
import { gatedTextReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { registerAccount, type SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const TOKEN = 'scim-token-of-the-identity-provider-0123456789'
const fake = useFakeOpenRouter()
const app = useBuiltApp(() => ({ NUXT_AUTH_SCIM_TOKEN: TOKEN, NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-scim', NUXT_THREADS_GENERATE_TITLES: 'false' }))

const scim = (path: string, init: { method?: string, body?: unknown, token?: string | null } = {}) => fetch(`${app.url}/scim/v2/${path}`, {
  method: init.method ?? 'GET',
  headers: { ...(init.token === null ? {} : { authorization: `Bearer ${init.token ?? TOKEN}` }), ...(init.body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
  ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
})
/** The first account: the admin. */
let root: SessionClient
const patch = (...Operations: unknown[]) => ({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations })

describe('SCIM provisioning', () => {
  it('answers only with the operator\'s token, in SCIM\'s own form', async () => {
    const missing = await scim('Users', { token: null })
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(await missing.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' })
    expect((await scim('Users', { token: 'wrong-token-of-the-same-length-0123456789abcd' })).status).toBe(401)
    const config = await scim('ServiceProviderConfig')
    expect(config.headers.get('content-type')).toContain('application/scim+json')
    expect(await config.json()).toMatchObject({ patch: { supported: true } })
  })

  it('creates, matches and deactivates people: a deactivated person\'s cookie, token and running answer end at once', async () => {
    root = await registerAccount(app.url, 'Root')
    expect((await root.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'open' }) })).status).toBe(200)
    const eve = await registerAccount(app.url, 'eve@example.com')
    const token = (await (await eve.post('/api/auth/tokens', { name: 'script', password: 'a long enough password' })).json()).token as string

    // Entra looks Dana up, then creates her.
    expect(await (await scim('Users?filter=userName%20eq%20%22dana%40example.com%22')).json()).toMatchObject({ totalResults: 0 })
    const created = await scim('Users', { method: 'POST', body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], externalId: 'aad-dana', userName: 'dana@example.com', active: true, displayName: 'Dana', emails: [{ primary: true, type: 'work', value: 'dana@example.com' }] } })
    expect(created.status).toBe(201)
    const dana = await created.json() as { id: string }
    expect((await scim('Users', { method: 'POST', body: { userName: 'dana@example.com' } })).status).toBe(409)

    // Eve was here before: matched by name, then deactivated the way Entra asks while an answer of hers runs.
    const [found] = (await (await scim('Users?filter=userName%20eq%20%22eve%40example.com%22')).json()).Resources as Array<{ id: string }>
    const gated = gatedTextReply(['Thinking… ', 'never sent'])
    fake.script(() => gated.reply)
    await eve.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Take your time' }] })
    await expect.poll(() => fake.requests.length).toBeGreaterThan(0)
    const deactivated = await scim(`Users/${found!.id}`, { method: 'PATCH', body: patch({ op: 'Replace', path: 'active', value: 'False' }) })
    expect(await deactivated.json()).toMatchObject({ active: false })
    expect((await eve.fetch('/api/threads')).status).toBe(401)
    expect((await fetch(`${app.url}/api/threads`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401)
    // Her answer stopped: the server hung up on the upstream mid-answer.
    await expect.poll(() => fake.requests.at(-1)!.clientDisconnected).toBe(true)
    gated.openAll()

    // Okta turns her back on; she signs in again.
    expect(await (await scim(`Users/${found!.id}`, { method: 'PATCH', body: patch({ op: 'replace', value: { active: true } }) })).json()).toMatchObject({ active: true })
    expect((await eve.post('/api/auth/login', { name: 'eve@example.com', password: 'a long enough password' })).status).toBe(200)

    // A group with Dana in it: the admin page says where her group comes from.
    const group = await scim('Groups', { method: 'POST', body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering', members: [{ value: dana.id }] } })
    expect(group.status).toBe(201)
    const view = await root.json<{ membership: { scim: string[] }, groups: string[] }>(`/api/admin/users/${dana.id}/groups`)
    expect(view).toMatchObject({ membership: { scim: ['Engineering'] }, groups: ['Engineering'] })

    expect((await scim(`Users/${dana.id}`, { method: 'DELETE' })).status).toBe(204)
    expect((await scim(`Users/${dana.id}`)).status).toBe(404)
    expect((await root.json<Array<{ name: string }>>('/api/admin/users')).map(user => user.name)).not.toContain('dana@example.com')
  })

  it('keeps an admin\'s credentials for a group with the group: moved with a provider\'s rename, gone with its delete', async () => {
    const put = (group: string, values: Record<string, string>) => root.fetch(`/api/admin/groups/${encodeURIComponent(group)}/credentials/github`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values }) })
    const keys = async (group: string) => (await root.json<{ services: Array<{ service: string, keys: Array<{ set: string | null }> }> }>(`/api/admin/groups/${encodeURIComponent(group)}/credentials`)).services.find(item => item.service === 'github')?.keys ?? []
    const created = await (await scim('Groups', { method: 'POST', body: { displayName: 'Platform' } })).json() as { id: string }
    expect((await put('Platform', { token: 'ghp_platform_secret' })).status).toBe(200)
    expect(await keys('Platform')).toEqual([{ key: 'token', set: 'group' }])
    expect((await put('No such group', { token: 'x' })).status).toBe(404)
    const member = await registerAccount(app.url, 'member@example.com')
    expect((await member.fetch('/api/admin/groups/Platform/credentials')).status).toBe(403)

    await scim(`Groups/${created.id}`, { method: 'PATCH', body: patch({ op: 'Replace', path: 'displayName', value: 'Platform Team' }) })
    expect(await keys('Platform Team')).toEqual([{ key: 'token', set: 'group' }])
    expect((await root.fetch('/api/admin/groups/Platform/credentials')).status).toBe(404)
    expect((await scim(`Groups/${created.id}`, { method: 'DELETE' })).status).toBe(204)
    // A new group of the same name starts with none of the old one's values.
    await scim('Groups', { method: 'POST', body: { displayName: 'Platform Team' } })
    expect(await keys('Platform Team')).toEqual([])
  })

  it('refuses a hostile filter and an oversized body with a message, and answers another client meanwhile', async () => {
    // Long, but under what an HTTP request line may carry (16 kB): the filter reader bounds it.
    const filter = encodeURIComponent(`userName eq "${'a'.repeat(12_000)}`)
    const [hostile, other] = await Promise.all([scim(`Users?filter=${filter}`), fetch(`${app.url}/api/health`)])
    expect(hostile.status).toBe(400)
    expect(await hostile.json()).toMatchObject({ scimType: 'invalidFilter' })
    expect(other.ok).toBe(true)
    const large = await scim('Users', { method: 'POST', body: JSON.stringify({ userName: 'big@example.com', displayName: 'x'.repeat(600_000) }) })
    expect(large.status).toBe(413)
    expect((await scim('Groups', { method: 'POST', body: '{"displayName":' })).status).toBe(400)
  })
})
