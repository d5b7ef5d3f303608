import { BlockList, isIP } from 'node:net'
import type { H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'

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

/** Which hops of a chain are proxies: the last `hops` of it, or those `list` holds. */
export type TrustedProxies = { hops: number } | { list: BlockList }

const parsed = new Map<string, TrustedProxies>()

/** `limits.trustedProxies` read (a count, or addresses and CIDR ranges); kept per text. */
export function trustedProxiesOf(setting: string): TrustedProxies {
  let trusted = parsed.get(setting)
  if (!trusted) {
    trusted = parseTrustedProxies(setting)
    parsed.set(setting, trusted)
  }
  return trusted
}

/** Why `setting` is not a valid `trustedProxies` value, or undefined (for the config schema). */
export function trustedProxiesProblem(setting: string): string | undefined {
  try {
    parseTrustedProxies(setting)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

function parseTrustedProxies(setting: string): TrustedProxies {
  const text = setting.trim()
  if (text === '') return { hops: 1 }
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops < 1 || hops > 20) throw new Error('a number of proxies must be between 1 and 20')
    return { hops }
  }
  const list = new BlockList()
  for (const item of text.split(',').map(part => part.trim()).filter(Boolean)) {
    const [address, bits, extra] = item.split('/')
    const family = isIP(address ?? '')
    if (!family || extra !== undefined) throw new Error(`"${item}" is not an address or a CIDR range such as 10.0.0.0/8`)
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) {
      list.addAddress(address!, type)
      continue
    }
    const prefix = /^\d+$/.test(bits) ? Number(bits) : Number.NaN
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) throw new Error(`"${item}" has a prefix length outside 0-${family === 4 ? 32 : 128}`)
    list.addSubnet(address!, prefix, type)
  }
  return { list }
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
