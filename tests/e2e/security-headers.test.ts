/**
 * The headers every answer carries, against the built server (nuxt-security): pages get a CSP
 * whose scripts need this response's nonce, framing and sniffing are refused, no referrer leaves,
 * nothing says what the server runs; images load only from this app and NUXT_PUBLIC_IMAGE_HOSTS.
 */
import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-security-headers-test-password-long-enough',
  NUXT_PUBLIC_IMAGE_HOSTS: 'https://images.example.com',
})

/** The CSP as directive → sources. */
function parsePolicy(header: string | null): Record<string, string[]> {
  return Object.fromEntries((header ?? '').split(';').map(part => part.trim()).filter(Boolean).map((part) => {
    const [name, ...sources] = part.split(/\s+/)
    return [name!, sources]
  }))
}

describe('security headers', () => {
  it('gives pages a nonce-based CSP that their own scripts carry, no framing, no sniffing, no referrer', async () => {
    const response = await fetch(`${app.url}/`)
    expect(response.status).toBe(200)
    const policy = parsePolicy(response.headers.get('content-security-policy'))
    const nonce = policy['script-src']!.find(source => source.startsWith("'nonce-"))!.slice(7, -1)
    expect(nonce.length).toBeGreaterThan(16)
    expect(policy['script-src']).toContain("'strict-dynamic'")
    expect(policy['script-src']).not.toContain("'unsafe-inline'")
    expect(policy['frame-ancestors']).toEqual(["'none'"])
    expect(policy['object-src']).toEqual(["'none'"])
    expect(policy['img-src']).toEqual(["'self'", 'data:', 'blob:', 'https://images.example.com'])
    const html = await response.text()
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map(match => match[0])
    expect(scripts.length).toBeGreaterThan(0)
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    // The page may ask for the location (the browser tool) and the microphone (dictation), each with
    // the person's consent, for itself only (never a frame it holds); the camera stays off.
    const features = response.headers.get('permissions-policy') ?? ''
    expect(features).toContain('geolocation=(self)')
    expect(features).toContain('microphone=(self)')
    expect(features).toContain('camera=()')
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(response.headers.get('x-powered-by')).toBeNull()
    // Every page load gets a nonce of its own.
    const again = parsePolicy((await fetch(`${app.url}/`)).headers.get('content-security-policy'))
    expect(again['script-src']).not.toContain(`'nonce-${nonce}'`)
  })

  it('sends the same protections with JSON answers, and no x-powered-by', async () => {
    for (const path of ['/api/tools', '/api/health', '/api/threads']) {
      const response = await fetch(`${app.url}${path}`)
      expect(response.status, path).toBe(200)
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(response.headers.get('x-frame-options'), path).toBe('DENY')
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer')
      expect(response.headers.get('x-powered-by'), path).toBeNull()
    }
  })
})
