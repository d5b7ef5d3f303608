import { isIP } from 'node:net'
import type { H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'
import { trustedProxiesOf, type TrustedProxies } from '../config/trusted-proxies'

/**
 * The client address every per-address limit counts (sign-in attempts, job starts and slots, guest
 * sessions, sign-ups, bodies and streams in flight): one rule, so no limit can be dodged where
 * another is not.
 *
 * Without a proxy it is the socket's. Behind proxies (`limits.trustProxy`), the chain is the
 * `X-Forwarded-For` entries followed by the socket's peer, and the client is the right-most address
 * that is not a trusted proxy, read from the right: a proxy appends what it saw, so everything left
 * of the last untrusted hop may have been written by the client itself (as Express's `trust proxy`
 * and nginx's `real_ip_recursive` read it). `limits.trustedProxies` says which hops are proxies:
 * a number of hops (`1`: the peer is the only proxy), or addresses and CIDR ranges
 * (`10.0.0.0/8, 127.0.0.1`); empty means one hop.
 */
export function clientAddress(event: H3Event, config: Pick<ServerConfig, 'limits'>): string | undefined {
  const peer = event.node.req.socket?.remoteAddress
  if (!config.limits.trustProxy) return peer
  return clientFromChain([...forwardedAddresses(event.node.req.headers['x-forwarded-for']), ...(peer ? [peer] : [])], trustedProxiesOf(config.limits.trustedProxies))
}

/** The addresses of `X-Forwarded-For` header(s), left to right. */
export function forwardedAddresses(header: string | string[] | undefined): string[] {
  return (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map(item => item.trim()).filter(Boolean)
}

/** An address as `BlockList` checks it: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as IPv4. */
function plain(address: string): { address: string, type: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const bare = mapped ? mapped[1]! : address
  const family = isIP(bare)
  return family ? { address: bare, type: family === 4 ? 'ipv4' : 'ipv6' } : undefined
}

/** The client of `chain` (X-Forwarded-For entries, then the socket's peer) under `trusted`. */
export function clientFromChain(chain: readonly string[], trusted: TrustedProxies): string | undefined {
  if (chain.length === 0) return undefined
  if ('hops' in trusted) return chain[Math.max(0, chain.length - 1 - trusted.hops)]
  for (let index = chain.length - 1; index >= 0; index--) {
    const hop = plain(chain[index]!)
    // Something that is not an address cannot be a proxy of ours: it is where the trust ends.
    if (!hop || !trusted.list.check(hop.address, hop.type)) return chain[index]
  }
  return chain[0]
}
