/**
 * `limits.trustedProxies` (NUXT_LIMITS_TRUSTED_PROXIES): which hops of an `X-Forwarded-For` chain
 * are this deployment's proxies. Parsed here, below both the config schema that checks it and the
 * client address (lib/http/client-address.ts) that uses it.
 */
import { BlockList, isIP } from 'node:net'

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
