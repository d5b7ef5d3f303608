import { readFileSync } from 'node:fs'

const CLOCK_TICKS_PER_SECOND = 100

/** CPU time (user + system) a process has used so far, in milliseconds (Linux /proc). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  // After "pid (comm) ": state is field 0, utime field 11, stime field 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND
}

/** Resident memory of a process in MB. */
export function processRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(entry => entry.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) / 1024
}

/** The value at `fraction` (0..1) of sorted samples. */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!
}
