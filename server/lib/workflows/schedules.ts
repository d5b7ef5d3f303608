/**
 * Workflow schedules: kept in the settings store every instance shares (each schedule under its
 * own key, and an index of them with when each runs next), and fired by every instance's ticker.
 *
 * Each occurrence starts at most one run, on any number of instances and across crashes:
 * - an instance fires a schedule only while it holds the schedule's lock in the store (a lease
 *   that lapses if the instance dies), so two live instances never both start it;
 * - the run's job id is made from the schedule and the occurrence (run-ids.ts), so an instance
 *   that died after starting the run but before writing that it did finds the run on the next try
 *   and only moves the schedule on; the store refuses a second job with that id in any case.
 * Crash before the run is created: the occurrence is still due, and starts on the next tick (at
 * most one lock lapse late, which is past the grace: it then counts as missed, run once or skipped
 * as below). During: the job either exists (found, not started again) or not (started, or skipped
 * by a schedule that skips missed runs). After, before the schedule moved on: as during (a run
 * that exists is recorded as started, whether or not the schedule skips missed runs).
 *
 * An occurrence missed while no instance ran (its run not started within a tick and `graceMs` of
 * its time) is run once or skipped, as the schedule says: when several were missed, only the
 * latest counts (the earlier ones are past anyway), so "run once" runs the latest and "skip"
 * skips to the next that is due; one that comes while the schedule's last
 * run still runs is skipped unless the schedule allows overlap. A run that cannot start (the
 * owner's limits, a workflow no longer valid) is recorded on the schedule and told to its owner.
 */
import type { SettingsStore } from '../stores/settings/settings-store'
import type { WorkflowSchedule, WorkflowScheduleInput, WorkflowScheduleOutcome } from '../../../shared/types/workflow-schedule'
import { MAX_SCHEDULES_PER_WORKFLOW } from '../../../shared/schemas/workflow-schedule'
import { scheduleTimes, ScheduleTimesError } from './schedule-times'
import { derivedRunId } from './run-ids'
import { fireLockKey, ScheduleBook } from './schedule-book'
import { DomainError, type HttpAnswer } from '../domain-error'

/** A schedule that cannot be made or changed: 400 (its times), 404 (no such schedule) or 409 (too many). */
export class WorkflowScheduleError extends DomainError {
  override name = 'WorkflowScheduleError'
  constructor(readonly statusCode: 400 | 404 | 409, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: { 400: 'Invalid schedule', 404: 'No such schedule', 409: 'Too many schedules' }[this.statusCode], message: this.message }
  }
}

/** What the schedules need. */
export interface WorkflowSchedulesOptions {
  settings: SettingsStore
  /** Starts a run of the schedule's workflow as its owner, with its inputs, under `jobId`; throws why it cannot. */
  startRun: (schedule: WorkflowSchedule, jobId: string) => Promise<{ id: string }>
  /** Checks what a schedule gives each run against its workflow's inputs now; throws (400, naming the input) when it does not fit. */
  checkInputs?: (workflowId: string, input: WorkflowScheduleInput) => Promise<void>
  /** A run's status if it exists (its job, or its entry in the run history). */
  findRun: (jobId: string) => Promise<{ status: string } | null>
  /** Tells the owner that an occurrence did not start a run, and why. */
  notifyFailure: (schedule: WorkflowSchedule, jobId: string, message: string) => Promise<void>
  tickMs: number
  minIntervalSeconds: number
  perUser: number
  /** How much later than one tick after its time an occurrence's run may start before it counts as missed. */
  graceMs: number
  now?: () => number
  /** This instance's name on locks (default: a random one). */
  instanceId?: string
  logger?: { warn: (message: string, ...details: unknown[]) => void }
}

/** The run id of `schedule`'s `occurrence`: the same on every instance and after a crash. */
function occurrenceRunId(schedule: WorkflowSchedule, occurrence: number): string {
  return derivedRunId('workflow-schedule', schedule.id, String(occurrence))
}

/** Workflow schedules and their ticker (see the file comment). */
export class WorkflowSchedules {
  private readonly now: () => number
  private readonly book: ScheduleBook
  private timer: ReturnType<typeof setInterval> | undefined
  private ticking: Promise<void> | undefined

  constructor(private readonly options: WorkflowSchedulesOptions) {
    this.now = options.now ?? Date.now
    this.book = new ScheduleBook(options.settings, options.instanceId ?? `schedules-${crypto.randomUUID()}`, this.now)
  }

  /** How late an occurrence may start before it counts as missed: a tick (it may fall just after one) and the grace. */
  private get missedAfterMs(): number {
    return this.options.tickMs + this.options.graceMs
  }

  /** A workflow's schedules, oldest first. */
  async list(workflowId: string): Promise<WorkflowSchedule[]> {
    const ids = (await this.book.index()).filter(entry => entry.workflowId === workflowId).map(entry => entry.id)
    const schedules = await Promise.all(ids.map(id => this.book.read(id)))
    return schedules.filter((schedule): schedule is WorkflowSchedule => schedule !== null).sort((a, b) => a.createdAt - b.createdAt)
  }

  /** Makes a schedule for the owner's workflow; 400 for times that cannot be used, 409 past the limits. */
  async create(workflowId: string, userId: string, input: WorkflowScheduleInput): Promise<WorkflowSchedule> {
    await this.options.checkInputs?.(workflowId, input)
    const now = this.now()
    const schedule: WorkflowSchedule = { ...input, id: crypto.randomUUID(), workflowId, userId, createdAt: now, updatedAt: now, nextRunAt: null }
    schedule.nextRunAt = schedule.enabled ? this.times(schedule).nextAfter(now) : null
    await this.book.add(schedule, (entries) => {
      if (entries.filter(entry => entry.workflowId === workflowId).length >= MAX_SCHEDULES_PER_WORKFLOW) throw new WorkflowScheduleError(409, `A workflow has at most ${MAX_SCHEDULES_PER_WORKFLOW} schedules; remove one first.`)
      if (entries.filter(entry => entry.userId === userId).length >= this.options.perUser) throw new WorkflowScheduleError(409, `You have ${this.options.perUser} schedules, the most this server allows (NUXT_WORKFLOWS_SCHEDULES_PER_USER); remove one first.`)
    })
    return schedule
  }

  /** Changes a schedule (its times start again from now); 404 when the workflow has no such schedule. */
  async update(workflowId: string, id: string, input: WorkflowScheduleInput): Promise<WorkflowSchedule> {
    await this.options.checkInputs?.(workflowId, input)
    return this.book.withLock(fireLockKey(id), async () => {
      const before = await this.book.read(id)
      if (!before || before.workflowId !== workflowId) throw new WorkflowScheduleError(404, 'This workflow has no such schedule.')
      const now = this.now()
      const schedule: WorkflowSchedule = { ...input, id, workflowId, userId: before.userId, createdAt: before.everyMinutes && input.everyMinutes === before.everyMinutes ? before.createdAt : now, updatedAt: now, nextRunAt: null, ...(before.last ? { last: before.last } : {}) }
      schedule.nextRunAt = schedule.enabled ? this.times(schedule).nextAfter(now) : null
      await this.book.save(schedule)
      return schedule
    })
  }

  /**
   * The next `count` times a schedule with these settings would run, from now (its every-N-minutes
   * counted from now, as if made now); 400 for times that cannot be used, saying why.
   */
  preview(times: Pick<WorkflowScheduleInput, 'cron' | 'timezone' | 'everyMinutes'>, count = 5): number[] {
    const now = this.now()
    const schedule = this.times({ ...times, createdAt: now } as WorkflowSchedule)
    const upcoming: number[] = []
    for (let at = schedule.nextAfter(now); at !== null && upcoming.length < count; at = schedule.nextAfter(at)) upcoming.push(at)
    return upcoming
  }

  /**
   * "Run now": starts a run with the schedule's settings at once, as its owner (a run of its own:
   * the schedule's next occurrence stays as it was); 404 for another workflow's schedule. Throws
   * what the start throws (limits, inputs that no longer fit).
   */
  async runNow(workflowId: string, id: string): Promise<{ id: string }> {
    const schedule = await this.book.read(id)
    if (!schedule || schedule.workflowId !== workflowId) throw new WorkflowScheduleError(404, 'This workflow has no such schedule.')
    return this.options.startRun(schedule, crypto.randomUUID())
  }

  /** Removes a schedule; false when the workflow has no such schedule. */
  async remove(workflowId: string, id: string): Promise<boolean> {
    const schedule = await this.book.read(id)
    if (!schedule || schedule.workflowId !== workflowId) return false
    await this.book.removeWhere(entry => entry.id === id)
    return true
  }

  /** Removes every schedule of a workflow (it was deleted). */
  removeAllOf(workflowId: string): Promise<void> {
    return this.book.removeWhere(entry => entry.workflowId === workflowId)
  }

  /** Removes every schedule of an account (it was deleted). */
  removeUser(userId: string): Promise<void> {
    return this.book.removeWhere(entry => entry.userId === userId)
  }

  /** Starts the ticker (`tickMs`); `stop` ends it. */
  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => void this.tick(), this.options.tickMs)
    this.timer.unref?.()
    void this.tick()
  }

  /** Stops the ticker and waits for a tick under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.ticking
  }

  /** Fires every due occurrence once (see the file comment); one tick at a time. */
  tick(): Promise<void> {
    this.ticking ??= this.fireDue().catch(error => this.options.logger?.warn('Workflow schedules could not be checked', error)).finally(() => (this.ticking = undefined))
    return this.ticking
  }

  private async fireDue(): Promise<void> {
    const now = this.now()
    const due = (await this.book.index()).filter(entry => entry.nextRunAt !== null && entry.nextRunAt <= now)
    for (const entry of due) {
      // Held by another instance (firing it, or someone changing it): it is theirs this time.
      await this.book.withLock(fireLockKey(entry.id), () => this.fire(entry.id), 1)
        .catch(error => this.options.logger?.warn(`Workflow schedule ${entry.id} could not fire`, error))
    }
  }

  /** Fires schedule `id`'s due occurrence (its lock held). */
  private async fire(id: string): Promise<void> {
    const schedule = await this.book.read(id)
    const now = this.now()
    if (!schedule || !schedule.enabled || schedule.nextRunAt === null || schedule.nextRunAt > now) {
      // Read again under the lock: it moved on, or was switched off or removed, since the index was read.
      if (schedule) await this.book.syncIndex(schedule)
      return
    }
    let times
    try {
      times = this.times(schedule)
    } catch (error) {
      // The server's minimum interval was raised since it was made: it stops, saying why.
      schedule.last = { at: now, occurrence: schedule.nextRunAt, status: 'failed', message: (error as Error).message }
      schedule.nextRunAt = null
      schedule.enabled = false
      await this.book.save(schedule)
      return
    }
    // The latest occurrence that is due: any before it were missed whatever their lateness.
    const occurrence = Math.max(schedule.nextRunAt, times.lastBy(now) ?? schedule.nextRunAt)
    const missed = now - occurrence > this.missedAfterMs
    const outcome = missed && schedule.missed === 'skip'
      ? await this.skipMissed(schedule, occurrence, now)
      : await this.startOccurrence(schedule, occurrence, now)
    schedule.last = outcome
    schedule.nextRunAt = times.nextAfter(Math.max(occurrence, now))
    schedule.updatedAt = now
    await this.book.save(schedule)
  }

  /**
   * A missed occurrence of a schedule that skips them: skipped, unless an instance that died before
   * moving the schedule on had started its run (a lock lapses after a minute, past the grace).
   */
  private async skipMissed(schedule: WorkflowSchedule, occurrence: number, now: number): Promise<WorkflowScheduleOutcome> {
    const jobId = occurrenceRunId(schedule, occurrence)
    if (await this.options.findRun(jobId)) return { at: now, occurrence, status: 'started', jobId }
    return { at: now, occurrence, status: 'skipped', message: 'missed while the server was down (this schedule skips missed runs)' }
  }

  /** Starts the run of `occurrence`, unless it started already or the last run still runs. */
  private async startOccurrence(schedule: WorkflowSchedule, occurrence: number, now: number): Promise<WorkflowScheduleOutcome> {
    const jobId = occurrenceRunId(schedule, occurrence)
    if (await this.options.findRun(jobId)) return { at: now, occurrence, status: 'started', jobId }
    if (!schedule.overlap && schedule.last?.jobId && (await this.options.findRun(schedule.last.jobId))?.status === 'streaming') {
      return { at: now, occurrence, status: 'skipped', message: 'its last run was still going (this schedule does not overlap runs)' }
    }
    try {
      await this.options.startRun(schedule, jobId)
      return { at: now, occurrence, status: 'started', jobId }
    } catch (error) {
      // Another instance (whose lock lapsed) may have started it meanwhile: then it did start.
      if (await this.options.findRun(jobId).catch(() => null)) return { at: now, occurrence, status: 'started', jobId }
      const message = (error as { message?: string }).message ?? String(error)
      await this.options.notifyFailure(schedule, jobId, message).catch(failure => this.options.logger?.warn(`Schedule ${schedule.id}: its owner could not be told it failed`, failure))
      return { at: now, occurrence, status: 'failed', message }
    }
  }

  private times(schedule: WorkflowSchedule) {
    try {
      return scheduleTimes(schedule, schedule.createdAt, this.options.minIntervalSeconds)
    } catch (error) {
      if (error instanceof ScheduleTimesError) throw new WorkflowScheduleError(400, `This schedule cannot be used: ${error.message}`)
      throw error
    }
  }
}
