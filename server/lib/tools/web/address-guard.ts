/**
 * Which network addresses a fetch on someone's behalf may reach: public unicast addresses only,
 * unless the operator allows more. Private (10/8, 172.16/12, 192.168/16, fc00::/7), loopback,
 * link-local (169.254/16 — cloud metadata at 169.254.169.254 — and fe80::/10), carrier-grade NAT,
 * multicast, reserved and documentation ranges, and IPv6 forms that carry an IPv4 address (mapped,
 * NAT64, 6to4) are refused, so a model cannot be made to read the server's own services.
 */
import { BlockList, isIP } from 'node:net'

const REFUSED = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) REFUSED.addSubnet(network, prefix, 'ipv6')

/** The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx) stands for. */
function mappedIpv4(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1]
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return undefined
  const high = Number.parseInt(hex[1]!, 16)
  const low = Number.parseInt(hex[2]!, 16)
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** The operator's allowed networks (`10.1.2.3`, `10.0.0.0/8`, `fd00::/8`), checked before the refused ranges. */
export function allowedNetworks(entries: readonly string[]): BlockList {
  const allowed = new BlockList()
  for (const entry of entries) {
    const [address, prefix] = entry.trim().split('/')
    const family = isIP(address ?? '')
    if (!family) throw new Error(`"${entry}" is not an IP address or network (such as 10.0.0.0/8).`)
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) allowed.addAddress(address!, type)
    else allowed.addSubnet(address!, Number(prefix), type)
  }
  return allowed
}

/** Why `address` may not be fetched from, or undefined when it may. */
export function addressRefusal(address: string, allowed?: BlockList): string | undefined {
  const family = isIP(address)
  if (!family) return `"${address}" is not an IP address`
  const v4 = family === 6 ? mappedIpv4(address) : address
  const [checked, type] = v4 ? [v4, 'ipv4' as const] : [address, 'ipv6' as const]
  if (allowed?.check(checked, type)) return undefined
  if (REFUSED.check(checked, type)) return `${address} is a private, loopback, link-local or reserved address`
  return undefined
}
