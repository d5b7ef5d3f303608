import { describe, expect, it } from 'vitest'
import { WorkflowSchedules } from '../../../server/lib/workflows/schedules'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import type { SettingsStore } from '../../../server/lib/stores/settings/settings-store'
import type { WorkflowScheduleInput } from '../../../shared/types/workflow-schedule'

const MINUTE = 60_000
const every = (minutes: number, extra: Partial<WorkflowScheduleInput> = {}): WorkflowScheduleInput => ({ everyMinutes: minutes, timezone: 'UTC', missed: 'run-once', overlap: false, enabled: true, ...extra })

/**
 * Instances of the scheduler on one shared settings store (as on Convex) and one shared set of
 * runs (the job store: a second job with an id is refused), on a clock the test moves.
 */
function cluster(options: { settings?: SettingsStore, refuse?: (jobId: string) => string | undefined } = {}) {
  const settings = options.settings ?? createMemoryAccountBackend()
  const clock = { now: Date.parse('2026-11-25T10:00:00Z') }
  const runs = new Map<string, { status: string }>()
  const started: string[] = []
  const failures: string[] = []
  const instance = (name: string) => new WorkflowSchedules({
    settings,
    startRun: async (_schedule, jobId) => {
      const refused = options.refuse?.(jobId)
      if (refused) throw new Error(refused)
      if (runs.has(jobId)) throw new Error(`Job ${jobId} already exists.`)
      runs.set(jobId, { status: 'streaming' })
      started.push(jobId)
      return { id: jobId }
    },
    findRun: async jobId => runs.get(jobId) ?? null,
    notifyFailure: async (_schedule, _jobId, message) => void failures.push(message),
    tickMs: 10_000,
    graceMs: 5_000,
    minIntervalSeconds: 60,
    perUser: 8,
    now: () => clock.now,
    instanceId: name,
  })
  const finishAll = () => runs.forEach(run => (run.status = 'complete'))
  return { settings, clock, runs, started, failures, instance, finishAll }
}

describe('workflow schedules', () => {
  it('fires each occurrence once when two instances tick at the same moments', async () => {
    const { clock, started, instance, finishAll } = cluster()
    const [a, b] = [instance('a'), instance('b')]
    const schedule = await a.create('wf', 'owner', every(1))
    expect(schedule.nextRunAt).toBe(clock.now + MINUTE)
    for (let minute = 1; minute <= 5; minute++) {
      clock.now += MINUTE
      await Promise.all([a.tick(), b.tick(), b.tick(), a.tick()])
      finishAll()
    }
    expect(started).toHaveLength(5)
    expect(new Set(started).size).toBe(5)
    expect((await b.list('wf'))[0]).toMatchObject({ nextRunAt: clock.now + MINUTE, last: { status: 'started', jobId: started[4] } })
  })

  it.each(['run-once', 'skip'] as const)('starts an occurrence once when an instance died after starting its run but before moving the schedule on (missed: %s)', async (missed) => {
    const base = createMemoryAccountBackend()
    let dead = false
    // Instance a dies once its run has started: its write of the moved-on schedule never happens, and its hold on the schedule is never given up.
    const settings: SettingsStore = {
      ...base,
      setSetting: async (key, value) => {
        if (dead && key.startsWith('workflow-schedule:')) throw new Error('killed')
        return base.setSetting(key, value)
      },
      unlock: async (key, owner) => {
        if (!dead) await base.unlock(key, owner)
      },
    }
    const { clock, started, instance } = cluster({ settings })
    const [a, b] = [instance('a'), instance('b')]
    const made = clock.now
    // The hold lapses a minute later, past the tick and the grace: the occurrence is then missed, and its run is found either way.
    await a.create('wf', 'owner', every(5, { overlap: true, missed }))
    clock.now += 5 * MINUTE
    dead = true
    await a.tick()
    dead = false
    expect(started).toHaveLength(1)
    // While a's hold lasts, b leaves the schedule; once it lapses, b finds the run and only moves the schedule on.
    await b.tick()
    clock.now += 61_000
    await b.tick()
    expect(started).toHaveLength(1)
    expect((await b.list('wf'))[0]).toMatchObject({ last: { status: 'started', jobId: started[0], occurrence: made + 5 * MINUTE }, nextRunAt: made + 10 * MINUTE })
  })

  it('runs an occurrence missed while the server was down once (the latest), or skips it, as the schedule says', async () => {
    const { clock, started, instance } = cluster()
    const scheduler = instance('a')
    const made = clock.now
    const runOnce = await scheduler.create('wf-1', 'owner', every(1))
    const skip = await scheduler.create('wf-2', 'owner', every(1, { missed: 'skip' }))
    // Back 30 s after the tenth occurrence: past a tick and the grace, so all ten were missed.
    clock.now += 10 * MINUTE + 30_000
    await scheduler.tick()
    expect(started).toHaveLength(1)
    const [ran] = await scheduler.list('wf-1')
    expect(ran).toMatchObject({ id: runOnce.id, last: { status: 'started', occurrence: made + 10 * MINUTE }, nextRunAt: made + 11 * MINUTE })
    const [skipped] = await scheduler.list('wf-2')
    expect(skipped).toMatchObject({ id: skip.id, last: { status: 'skipped', message: expect.stringContaining('missed while the server was down') }, nextRunAt: made + 11 * MINUTE })
  })

  it('counts an occurrence as missed once it is a tick and the grace late (an outage under a minute too), and runs only the latest due', async () => {
    const { clock, started, instance, finishAll } = cluster()
    const scheduler = instance('a')
    const made = clock.now
    const skip = await scheduler.create('wf-1', 'owner', every(1, { missed: 'skip' }))
    const runOnce = await scheduler.create('wf-2', 'owner', every(1))
    // Down for the first occurrence and back 20 s after it: past the 10 s tick and 5 s grace.
    clock.now = made + MINUTE + 20_000
    await scheduler.tick()
    expect(started).toHaveLength(1)
    expect((await scheduler.list('wf-1'))[0]).toMatchObject({ id: skip.id, last: { status: 'skipped', occurrence: made + MINUTE, message: expect.stringContaining('missed') }, nextRunAt: made + 2 * MINUTE })
    expect((await scheduler.list('wf-2'))[0]).toMatchObject({ id: runOnce.id, last: { status: 'started', occurrence: made + MINUTE }, nextRunAt: made + 2 * MINUTE })
    // Two occurrences passed, the later only 3 s ago: that one runs (on time), the earlier was missed.
    finishAll()
    clock.now = made + 3 * MINUTE + 3_000
    await scheduler.tick()
    expect((await scheduler.list('wf-1'))[0]).toMatchObject({ last: { status: 'started', occurrence: made + 3 * MINUTE }, nextRunAt: made + 4 * MINUTE })
    expect((await scheduler.list('wf-2'))[0]).toMatchObject({ last: { status: 'started', occurrence: made + 3 * MINUTE }, nextRunAt: made + 4 * MINUTE })
    expect(started).toHaveLength(3)
  })

  it('skips an occurrence while the last run still runs, unless overlap is allowed', async () => {
    const { clock, started, instance, finishAll } = cluster()
    const scheduler = instance('a')
    await scheduler.create('wf', 'owner', every(1))
    clock.now += MINUTE
    await scheduler.tick()
    clock.now += MINUTE
    await scheduler.tick()
    expect(started).toHaveLength(1)
    expect((await scheduler.list('wf'))[0]!.last).toMatchObject({ status: 'skipped', message: expect.stringContaining('still going') })
    finishAll()
    clock.now += MINUTE
    await scheduler.tick()
    expect(started).toHaveLength(2)
  })

  it('records a run that could not start, tells the owner, and goes on at the next occurrence', async () => {
    const { clock, started, failures, instance } = cluster({ refuse: () => 'You have used today\'s tokens.' })
    const scheduler = instance('a')
    await scheduler.create('wf', 'owner', every(1))
    clock.now += MINUTE
    await scheduler.tick()
    expect(started).toEqual([])
    expect(failures).toEqual(['You have used today\'s tokens.'])
    expect((await scheduler.list('wf'))[0]).toMatchObject({ last: { status: 'failed', message: 'You have used today\'s tokens.' }, nextRunAt: clock.now + MINUTE })
  })

  it('refuses times it cannot use (400) and more schedules than allowed (409); changes and removes them', async () => {
    const { clock, instance } = cluster()
    const scheduler = instance('a')
    await expect(scheduler.create('wf', 'owner', { ...every(1), everyMinutes: undefined, cron: '*/5 * * * * *' })).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('at most one run every 60 seconds') })
    const made = await Promise.all([1, 2, 3, 4, 5].map(() => scheduler.create('wf', 'owner', every(60))))
    await expect(scheduler.create('wf', 'owner', every(60))).rejects.toMatchObject({ statusCode: 409 })
    await Promise.all([1, 2, 3].map(() => scheduler.create('wf-b', 'owner', every(60))))
    await expect(scheduler.create('wf-c', 'owner', every(60))).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('8 schedules') })

    const changed = await scheduler.update('wf', made[0]!.id, { ...every(60), everyMinutes: undefined, cron: '0 8 * * 1-5', timezone: 'Europe/Berlin', enabled: true })
    expect(new Date(changed.nextRunAt!).toISOString()).toBe('2026-11-26T07:00:00.000Z')
    const off = await scheduler.update('wf', made[1]!.id, every(60, { enabled: false }))
    expect(off.nextRunAt).toBeNull()
    await expect(scheduler.update('wf-b', made[0]!.id, every(60))).rejects.toMatchObject({ statusCode: 404 })
    expect(await scheduler.remove('wf', made[2]!.id)).toBe(true)
    expect(await scheduler.remove('wf', made[2]!.id)).toBe(false)
    expect(await scheduler.list('wf')).toHaveLength(4)
    await scheduler.removeAllOf('wf')
    expect(await scheduler.list('wf')).toEqual([])
    await scheduler.removeUser('owner')
    expect(await scheduler.list('wf-b')).toEqual([])
    clock.now += 120 * MINUTE
    await scheduler.tick()
  })
})
