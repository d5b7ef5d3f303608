/**
 * The building blocks of the server's settings (server-config.ts): a setting (its type, default
 * and meaning), a group of them, and the value types several settings share, each with the words
 * a bad value gets.
 */
import { isIP } from 'node:net'
import { z } from 'zod'
import { trustedProxiesProblem } from './trusted-proxies'
import { siteUrlProblem } from './site-url'

/** One setting: its type (with its bounds and the words a bad value gets), its default, and what it means. */
export function setting<T extends z.ZodType>(type: T, fallback: z.util.NoUndefined<z.output<T>>, description: string) {
  return type.default(fallback).meta({ description })
}

/** A group of settings: absent, it takes each setting's default (every setting has one, so `{}` is a whole group). */
export function group<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object(shape).prefault({} as z.input<z.ZodObject<Shape>>)
}

export const positiveInt = z.number().int().positive()
export const milliseconds = z.number().int().positive().max(2_147_483_647)
/** A role's models: comma-separated ids, or * for any. */
export const modelList = z.string().trim().min(1, 'must be * (any model) or comma-separated model ids such as or3/offline-demo,openai/gpt-4o-mini')
export const budget = z.number().min(0, 'must be 0 (no limit) or more')
export const trustedProxies = z.string().superRefine((value, context) => {
  const problem = trustedProxiesProblem(value)
  if (problem) context.addIssue({ code: 'custom', message: `${problem} (a number of proxies, or addresses and CIDR ranges separated by commas)` })
})
export const networkList = z.string().superRefine((value, context) => {
  for (const entry of value.split(',').map(part => part.trim()).filter(Boolean)) {
    const [address, prefix, extra] = entry.split('/')
    const family = isIP(address ?? '')
    const bits = Number(prefix)
    if (!family || extra !== undefined || (prefix !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= (family === 4 ? 32 : 128)))) {
      context.addIssue({ code: 'custom', message: `"${entry.slice(0, 60)}" is not an IP address or network (such as 10.0.0.0/8 or fd00::/8)` })
    }
  }
})
export const siteUrl = z.string().superRefine((value, context) => {
  const problem = siteUrlProblem(value)
  if (problem) context.addIssue({ code: 'custom', message: problem })
})
