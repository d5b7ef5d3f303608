import { describe, expect, it } from 'vitest'
import { parseOriginList } from '../../../shared/origin-list'
import { crossSiteRefusal } from '../../../server/lib/http/same-origin'

const own = 'http://localhost:3000'
const check = (input: { method?: string, origin?: string, secFetchSite?: string, allowedOrigins?: string[] }) =>
  crossSiteRefusal({ method: input.method ?? 'POST', ownOrigin: own, origin: input.origin, secFetchSite: input.secFetchSite, allowedOrigins: input.allowedOrigins ?? [] })

describe('same-origin check for state-changing requests', () => {
  it('lets the app\'s own pages and scripts through', () => {
    expect(check({ origin: own, secFetchSite: 'same-origin' })).toBeUndefined()
    expect(check({ origin: 'HTTP://LOCALHOST:3000' })).toBeUndefined()
    expect(check({})).toBeUndefined()
    expect(check({ secFetchSite: 'none' })).toBeUndefined()
    // Behind a proxy that terminates TLS the server sees http; the browser still vouches same-origin.
    expect(check({ origin: 'https://localhost:3000', secFetchSite: 'same-origin' })).toBeUndefined()
  })

  it('refuses another site\'s page, another port of the same host included, saying what to do', () => {
    expect(check({ origin: 'http://localhost:4000', secFetchSite: 'same-site' })).toMatch(/came from http:\/\/localhost:4000.*NUXT_CSRF_ALLOWED_ORIGINS/)
    expect(check({ origin: 'https://evil.example' })).toBeDefined()
    expect(check({ secFetchSite: 'cross-site' })).toMatch(/cross-site page/)
    expect(check({ origin: 'null' })).toBeDefined()
  })

  it('never refuses reads, and accepts the operator\'s extra origins', () => {
    expect(check({ method: 'GET', origin: 'https://evil.example', secFetchSite: 'cross-site' })).toBeUndefined()
    expect(check({ origin: 'https://chat.example.com', allowedOrigins: parseOriginList(' https://chat.example.com/ ,https://b.example') })).toBeUndefined()
  })
})
