import { describe, expect, it } from 'vitest'
import { StreamSlots } from '../../../server/lib/http/stream-slots'

describe('StreamSlots', () => {
  it('refuses past each cap with the status and words of that cap, and frees a slot exactly once', () => {
    const slots = new StreamSlots({ perUser: 3, perJob: 2, perAddress: 100, max: 4 })
    const a1 = slots.acquire('alice', 'job-1')
    slots.acquire('alice', 'job-1')
    expect(() => slots.acquire('alice', 'job-1')).toThrow(expect.objectContaining({ statusCode: 429, message: expect.stringMatching(/already has 2 live viewers/) }))
    slots.acquire('alice', 'job-2')
    expect(() => slots.acquire('alice', 'job-3')).toThrow(expect.objectContaining({ statusCode: 429, message: expect.stringMatching(/You have 3 live streams open/) }))
    slots.acquire('bob', 'job-4')
    expect(() => slots.acquire('carol', 'job-5')).toThrow(expect.objectContaining({ statusCode: 503 }))
    a1()
    a1()
    expect(slots.open).toBe(3)
    expect(() => slots.acquire('carol', 'job-5')).not.toThrow()
    expect(slots.open).toBe(4)
  })

  it('caps one address whatever its users: fresh guests from one address cannot take every stream', () => {
    const slots = new StreamSlots({ perUser: 100, perJob: 25, perAddress: 3, max: 1_000 })
    const releases = ['guest-1', 'guest-2', 'guest-3'].map(guest => slots.acquire(guest, `tools:${guest}`, '203.0.113.9'))
    expect(() => slots.acquire('guest-4', 'tools:guest-4', '203.0.113.9')).toThrow(expect.objectContaining({ statusCode: 429, message: expect.stringMatching(/Your network address has 3 live streams open/) }))
    // Another address, the admin's, is served.
    expect(() => slots.acquire('admin', 'job-1', '198.51.100.1')).not.toThrow()
    releases[0]!()
    expect(() => slots.acquire('guest-4', 'tools:guest-4', '203.0.113.9')).not.toThrow()
  })
})
