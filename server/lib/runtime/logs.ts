/**
 * The server's log format. Everything the server logs goes through consola; in JSON form (the
 * default in production) each entry is one line an aggregator reads without parsing text:
 * `{"time","level","tag","msg","err"?,"jobId"?,"userId"?,"traceId"?,"spanId"?}`. A line about a
 * job carries the job's id and its user's id (never a name): a run logs through a logger made for
 * it (`withDefaults({ jobId, userId })`, jobs/manager.ts); with traces on, a line written during the
 * run carries its trace and span ids too (server/lib/tracing.ts). Text form is consola's readable
 * lines, for development.
 *
 * Secrets are never passed to the logger; as a second line of defence, JSON lines have anything
 * shaped like an OpenRouter key or a bearer token masked.
 */
import { consola, type ConsolaReporter, type LogObject } from 'consola'
import { activeTraceIds, jobOfContext } from '../tracing'

/** What `NUXT_LOGS_FORMAT` may say. */
export type LogFormat = 'auto' | 'json' | 'text'

/** Longest message a JSON line keeps (a runaway error text must not fill the disk one line at a time). */
const MAX_MESSAGE_CHARS = 8_000
/** Secret-shaped text masked in JSON lines (linear patterns: no nested repetition). */
const SECRET_SHAPES = [/sk-or-v1-[A-Za-z0-9]{8,}/g, /\b(Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*/gi]

/** Whether `format` means JSON lines in this environment. */
export function writesJson(format: LogFormat, nodeEnv: string | undefined): boolean {
  return format === 'json' || (format === 'auto' && nodeEnv === 'production')
}

/** `text` with anything shaped like a secret masked. */
export function maskSecrets(text: string): string {
  return SECRET_SHAPES.reduce((masked, shape) => masked.replace(shape, (_match, prefix?: string) => `${typeof prefix === 'string' ? prefix : ''}[redacted]`), text)
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value
  if (value instanceof Error) return value.message
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** One log entry as the JSON line written for it (without the newline). */
export function jsonLine(entry: LogObject): string {
  const args = entry.message === undefined ? entry.args : [entry.message, ...entry.args]
  const error = args.find((arg): arg is Error => arg instanceof Error)
  const message = args.filter(arg => arg !== error).map(describe).join(' ')
  const job = typeof entry.jobId === 'string' ? { jobId: entry.jobId, userId: typeof entry.userId === 'string' ? entry.userId : undefined } : jobOfContext()
  const trace = activeTraceIds()
  const line: Record<string, unknown> = {
    time: entry.date.toISOString(),
    level: entry.type,
    ...(entry.tag ? { tag: entry.tag } : {}),
    msg: maskSecrets(message.slice(0, MAX_MESSAGE_CHARS)),
    ...(error ? { err: { name: error.name, message: maskSecrets(error.message.slice(0, MAX_MESSAGE_CHARS)), ...(error.stack ? { stack: maskSecrets(error.stack.slice(0, MAX_MESSAGE_CHARS)) } : {}) } } : {}),
    ...(job ? { jobId: job.jobId, ...(job.userId ? { userId: job.userId } : {}) } : {}),
    ...(trace ? { traceId: trace.traceId, spanId: trace.spanId } : {}),
  }
  return JSON.stringify(line)
}

/** Writes each entry as a JSON line: errors and warnings to stderr, the rest to stdout. */
const jsonReporter: ConsolaReporter = {
  log(entry) {
    const stream = entry.level <= 1 ? process.stderr : process.stdout
    stream.write(`${jsonLine(entry)}\n`)
  },
}

/**
 * Sets the server's log format on consola's global instance. A `withTag` logger copies the
 * reporters when it is made, so the server makes its loggers after this (Nitro plugin 01.logs.ts
 * runs before the plugins that make them), never at module load.
 */
export function useLogFormat(format: LogFormat, nodeEnv: string | undefined): void {
  if (writesJson(format, nodeEnv)) consola.setReporters([jsonReporter])
}
