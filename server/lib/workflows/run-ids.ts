/**
 * Run ids made from what a run is for, so that starting it twice (a webhook call retried, a
 * schedule's occurrence fired by two instances, or again after a crash) names the same job and
 * the store refuses the second: a UUID (version 8) from the SHA-256 of the parts.
 */
import { createHash } from 'node:crypto'

/** The run id of `parts` (the same parts, the same id). */
export function derivedRunId(...parts: string[]): string {
  const bytes = createHash('sha256').update(parts.join('\n')).digest().subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0F) | 0x80
  bytes[8] = (bytes[8]! & 0x3F) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
