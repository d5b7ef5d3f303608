/** The one counter behind the stream and body caps: per key of each dimension and in total, each against its cap. */
import { describe, expect, it } from 'vitest'
import { CapacityCounter } from '../../server/lib/capacity-counter'

describe('CapacityCounter', () => {
  it('names the first cap (in the order asked) that more would pass, holds and releases once, and leaves a dimension without a key uncounted', () => {
    const counter = new CapacityCounter<'user' | 'address'>({ total: 5, user: 2, address: 3 })
    const order = ['total', 'user', 'address'] as const
    const first = counter.hold(1, { user: 'ada', address: '10.0.0.1' })
    counter.hold(1, { user: 'ada', address: '10.0.0.1' })
    expect(counter.wouldPass(1, { user: 'ada', address: '10.0.0.1' }, order)).toBe('user')
    expect(counter.wouldPass(1, { user: 'bob', address: '10.0.0.1' }, order)).toBeUndefined()
    counter.hold(1, { user: 'bob', address: '10.0.0.1' })
    expect(counter.wouldPass(1, { user: 'cleo', address: '10.0.0.1' }, order)).toBe('address')
    // No address known: only the user and the total count.
    expect(counter.wouldPass(1, { user: 'cleo' }, order)).toBeUndefined()
    expect(counter.wouldPass(3, { user: 'cleo' }, order)).toBe('total')
    expect(counter.held('total')).toBe(3)
    first()
    first()
    expect(counter.held('total')).toBe(2)
    expect(counter.held('user', 'ada')).toBe(1)
    expect(counter.wouldPass(1, { user: 'ada', address: '10.0.0.1' }, order)).toBeUndefined()
  })
})
