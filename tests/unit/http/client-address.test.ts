import { describe, expect, it } from 'vitest'
import { clientFromChain } from '../../../server/lib/http/client-address'
import { trustedProxiesOf, trustedProxiesProblem } from '../../../server/lib/config/trusted-proxies'

describe('the client address behind proxies', () => {
  it('takes the right-most hop that is not a proxy, so an address the client wrote in X-Forwarded-For is ignored', () => {
    // nginx appends what it saw: the client wrote "6.6.6.6", the proxy added its peer, 203.0.113.7.
    const chain = ['6.6.6.6', '203.0.113.7', '10.0.0.2']
    expect(clientFromChain(chain, trustedProxiesOf(''))).toBe('203.0.113.7')
    expect(clientFromChain(chain, trustedProxiesOf('1'))).toBe('203.0.113.7')
    // Two proxies (a CDN, then nginx): the hop before both.
    expect(clientFromChain(['6.6.6.6', '198.51.100.9', '172.16.0.5', '10.0.0.2'], trustedProxiesOf('2'))).toBe('198.51.100.9')
    expect(clientFromChain(['10.0.0.2'], trustedProxiesOf('3'))).toBe('10.0.0.2')
  })

  it('walks back over listed proxies (addresses and CIDR ranges, IPv4-mapped too) to the first one not listed', () => {
    const trusted = trustedProxiesOf('10.0.0.0/8, 172.16.0.5, ::1')
    expect(clientFromChain(['6.6.6.6', '198.51.100.9', '172.16.0.5', '::ffff:10.1.2.3'], trusted)).toBe('198.51.100.9')
    // A peer that is no listed proxy is the client, whatever the header says.
    expect(clientFromChain(['6.6.6.6', '203.0.113.50'], trusted)).toBe('203.0.113.50')
    // Something that is not an address ends the trust there.
    expect(clientFromChain(['6.6.6.6', 'unknown', '10.0.0.2'], trusted)).toBe('unknown')
    expect(clientFromChain(['10.0.0.9', '10.0.0.2'], trusted)).toBe('10.0.0.9')
    expect(clientFromChain([], trusted)).toBeUndefined()
  })

  it('names a setting that does not parse', () => {
    expect(trustedProxiesProblem('10.0.0.0/8,127.0.0.1')).toBeUndefined()
    expect(trustedProxiesProblem('0')).toMatch(/between 1 and 20/)
    expect(trustedProxiesProblem('10.0.0.0/33')).toMatch(/prefix length outside 0-32/)
    expect(trustedProxiesProblem('proxy.internal')).toMatch(/"proxy.internal" is not an address or a CIDR range/)
  })
})
