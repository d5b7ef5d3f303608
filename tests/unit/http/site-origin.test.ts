import { describe, expect, it } from 'vitest'
import { appOriginFor, hostMatchesSite, isLoopbackAddress, isLoopbackHost } from '../../../server/lib/http/site-origin'
import { siteOriginOf, siteUrlProblem } from '../../../server/lib/config/site-url'
import { FirstRunGuard } from '../../../server/lib/auth/first-run'

describe('the site\'s origin', () => {
  it('reads NUXT_SITE_URL as an origin, and names one that is not', () => {
    expect(siteOriginOf('')).toBeUndefined()
    expect(siteOriginOf('https://Chat.Example.com/')).toBe('https://chat.example.com')
    expect(siteUrlProblem('https://chat.example.com')).toBeUndefined()
    expect(siteUrlProblem('chat.example.com')).toMatch(/such as https:\/\/chat.example.com/)
    expect(siteUrlProblem('ftp://chat.example.com')).toMatch(/must start with https:\/\//)
    expect(siteUrlProblem('https://chat.example.com/app')).toMatch(/an origin only/)
  })

  it('matches a request\'s host to the site, default port or not', () => {
    expect(hostMatchesSite('chat.example.com', 'https://chat.example.com')).toBe(true)
    expect(hostMatchesSite('CHAT.example.com:443', 'https://chat.example.com')).toBe(true)
    expect(hostMatchesSite('attacker.example', 'https://chat.example.com')).toBe(false)
    expect(hostMatchesSite('chat.example.com:8443', 'https://chat.example.com')).toBe(false)
    expect(hostMatchesSite(undefined, 'https://chat.example.com')).toBe(false)
  })

  it('tells loopback names and addresses from others', () => {
    expect(['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'app.localhost'].map(isLoopbackHost)).toEqual([true, true, true, true])
    expect(['rebind.attacker.example', '10.0.0.1', undefined].map(isLoopbackHost)).toEqual([false, false, false])
    expect(['127.0.0.1', '::ffff:127.0.0.1', '::1', '10.0.0.1', undefined].map(isLoopbackAddress)).toEqual([true, true, true, false, false])
  })

  it('gives others the configured site, else the page\'s origin only when it names the host asked, never a foreign or null Origin', () => {
    const request = { host: 'chat.example.com', requestOrigin: 'http://chat.example.com' }
    expect(appOriginFor({ ...request, siteOrigin: 'https://chat.example.com', origin: 'https://evil.example' })).toBe('https://chat.example.com')
    expect(appOriginFor({ ...request, origin: 'https://chat.example.com' })).toBe('https://chat.example.com')
    expect(appOriginFor({ ...request, origin: 'https://evil.example' })).toBe('http://chat.example.com')
    expect(appOriginFor({ ...request, origin: 'null' })).toBe('http://chat.example.com')
    expect(appOriginFor({ ...request, origin: 'javascript:alert(1)' })).toBe('http://chat.example.com')
  })
})

describe('the first account', () => {
  it('is created through the site or from this machine without a code, from elsewhere only with the printed code', () => {
    const guard = new FirstRunGuard('ABCD-EFGH-JKLM')
    expect(guard.refusal({ siteConfigured: true, loopback: false })).toBeUndefined()
    expect(guard.refusal({ siteConfigured: false, loopback: true })).toBeUndefined()
    expect(guard.refusal({ siteConfigured: false, loopback: false })).toMatch(/needs the setup code the server printed/)
    expect(guard.refusal({ siteConfigured: false, loopback: false, setupCode: 'WXYZ-WXYZ-WXYZ' })).toMatch(/not the one this server printed/)
    expect(guard.refusal({ siteConfigured: false, loopback: false, setupCode: ' abcd-efgh-jklm ' })).toBeUndefined()
    expect(new FirstRunGuard().setupCode).toMatch(/^[A-Z0-9X]{4}-[A-Z0-9X]{4}-[A-Z0-9X]{4}$/)
  })
})
