/** The server's JSON log lines: the job's ids from the async context, errors, masking of secret-shaped text. */
import { describe, expect, it } from 'vitest'
import type { LogObject } from 'consola'
import { jsonLine, maskSecrets, writesJson } from '../../../server/lib/runtime/logs'
import { startTelemetry } from '../../../server/lib/runtime/telemetry'
import { context } from '@opentelemetry/api'

const entry = (args: unknown[], overrides: Partial<LogObject> = {}): LogObject => ({ level: 3, type: 'info', tag: 'jobs', args, date: new Date('2026-11-25T10:00:00Z'), ...overrides })

describe('JSON log lines', () => {
  it('writes one object per entry, with the message, the tag and an error apart', () => {
    const error = new Error('database is locked')
    const line = JSON.parse(jsonLine(entry(['Job j1: a progress write failed', error], { type: 'warn', level: 1 })))
    expect(line).toMatchObject({ time: '2026-11-25T10:00:00.000Z', level: 'warn', tag: 'jobs', msg: 'Job j1: a progress write failed', err: { name: 'Error', message: 'database is locked' } })
    expect(line.jobId).toBeUndefined()
  })

  it("carries the job's and its user's ids in the lines of a run's logger (consola's defaults)", () => {
    const line = JSON.parse(jsonLine(entry(['Job job-1 (chat) started.'], { jobId: 'job-1', userId: 'user-1' })))
    expect(line).toMatchObject({ msg: 'Job job-1 (chat) started.', jobId: 'job-1', userId: 'user-1' })
    // Other lines have none, and no trace ids while traces are off.
    const other = JSON.parse(jsonLine(entry(['between jobs'])))
    expect(other.jobId).toBeUndefined()
    expect(other.traceId).toBeUndefined()
  })

  it('installs no async context while traces are off (it would slow every promise of the process)', () => {
    expect(startTelemetry({ exportTraces: true, env: {}, service: 'test' }).exporting).toBe(false)
    expect(startTelemetry({ exportTraces: false, env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, service: 'test' }).exporting).toBe(false)
    expect(context['_getContextManager']().constructor.name).toBe('NoopContextManager')
  })

  it('masks anything shaped like an OpenRouter key or a bearer token, and cuts runaway messages', () => {
    expect(maskSecrets('key sk-or-v1-abcdef0123456789 refused')).toBe('key [redacted] refused')
    expect(maskSecrets('sent Authorization: Bearer abc.def-ghi_jkl0123 to it')).toBe('sent Authorization: Bearer [redacted] to it')
    expect(maskSecrets('nothing secret here')).toBe('nothing secret here')
    const line = JSON.parse(jsonLine(entry(['x'.repeat(20_000)])))
    expect(line.msg.length).toBe(8_000)
  })

  it('is JSON in production by default, and as asked otherwise', () => {
    expect(writesJson('auto', 'production')).toBe(true)
    expect(writesJson('auto', 'development')).toBe(false)
    expect(writesJson('json', 'development')).toBe(true)
    expect(writesJson('text', 'production')).toBe(false)
  })
})
