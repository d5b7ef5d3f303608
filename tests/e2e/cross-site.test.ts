/**
 * Cross-site request forgery against the built server: a page on another origin (another port of
 * the same host, where SameSite cookies are still sent) cannot start, change or stop anything.
 */
import { describe, expect, it } from 'vitest'
import { SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({ NUXT_SESSION_PASSWORD: 'a-cross-site-test-password-long-enough', NUXT_CSRF_ALLOWED_ORIGINS: 'https://partner.example' })

const json = { 'content-type': 'application/json' }

describe('cross-site requests', () => {
  it('refuses state-changing requests from another site\'s page with a 403, changing nothing, while the app\'s own pages work', async () => {
    const victim = new SessionClient(app.url)
    const thread = await (await victim.post('/api/threads', {}, { origin: app.url, 'sec-fetch-site': 'same-origin' })).json()
    const evilPort = new URL(app.url)
    evilPort.port = String(Number(evilPort.port) + 1)
    const attacks: Array<[string, RequestInit]> = [
      ['/api/openrouter/stream', { method: 'POST', headers: { ...json, 'origin': evilPort.origin, 'sec-fetch-site': 'same-site' }, body: JSON.stringify({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'hi' }], _background: true }) }],
      [`/api/threads/${thread.id}`, { method: 'DELETE', headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' } }],
      [`/api/threads/${thread.id}`, { method: 'PATCH', headers: { ...json, 'sec-fetch-site': 'cross-site' }, body: JSON.stringify({ title: 'pwned' }) }],
    ]
    for (const [path, init] of attacks) {
      const response = await victim.fetch(path, init)
      expect(response.status, `${init.method} ${path}`).toBe(403)
      expect((await response.json()).message).toMatch(/must come from this app's own pages/)
    }
    expect((await victim.json('/api/jobs')).jobs).toEqual([])
    expect((await victim.json(`/api/threads/${thread.id}`)).thread.title).toBe('New chat')

    // Reading is not refused, and an allowed partner origin may write.
    expect((await victim.fetch('/api/threads', { headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' } })).status).toBe(200)
    const renamed = await victim.fetch(`/api/threads/${thread.id}`, { method: 'PATCH', headers: { ...json, origin: 'https://partner.example' }, body: JSON.stringify({ title: 'Partner' }) })
    expect(renamed.status).toBe(200)
  })
})
