/**
 * Where workflow schedules are kept: in the settings store every instance shares, each schedule
 * under its own key, and an index of them with when each runs next (enough to know which are due
 * without reading them all), changed under locks in the store (a lease that lapses if the holder
 * dies; schedules.ts says how firing uses them).
 */
import { readJsonSetting, type SettingsStore } from '../stores/settings/settings-store'
import { SettingLocks } from '../stores/settings/setting-locks'
import type { WorkflowSchedule } from '../../../shared/types/workflow-schedule'

const INDEX_KEY = 'workflow-schedules'
const scheduleKey = (id: string) => `workflow-schedule:${id}`
/** How long an instance's hold on a schedule (or the index) lasts if it dies holding it. */
const LOCK_TTL_MS = 60_000
/** Tries to take a busy lock before giving up (a schedule or the index being changed elsewhere). */
const LOCK_ATTEMPTS = 80

/** The lock a schedule is fired and changed under. */
export const fireLockKey = (id: string) => `workflow-schedule-lock:${id}`

/** One schedule in the index: enough to know which are due without reading them all. */
export interface ScheduleIndexEntry {
  id: string
  workflowId: string
  userId: string
  nextRunAt: number | null
}

/** The schedules as stored, their index, and the locks they are changed under. */
export class ScheduleBook {
  private readonly locks: SettingLocks

  constructor(private readonly settings: SettingsStore, owner: string, now: () => number) {
    this.locks = new SettingLocks(settings, owner, { ttlMs: LOCK_TTL_MS, attempts: LOCK_ATTEMPTS, now, busyMessage: 'Workflow schedules are being changed elsewhere; try again in a moment.' })
  }

  /** What the index says of `schedule`. */
  entryOf(schedule: WorkflowSchedule): ScheduleIndexEntry {
    return { id: schedule.id, workflowId: schedule.workflowId, userId: schedule.userId, nextRunAt: schedule.enabled ? schedule.nextRunAt : null }
  }

  read(id: string): Promise<WorkflowSchedule | null> {
    return readJsonSetting(this.settings, scheduleKey(id), null)
  }

  index(): Promise<ScheduleIndexEntry[]> {
    return readJsonSetting(this.settings, INDEX_KEY, [])
  }

  /** Adds `schedule` to the index (`admit` may refuse it, throwing) and stores it, under the index's lock. */
  add(schedule: WorkflowSchedule, admit: (entries: ScheduleIndexEntry[]) => void): Promise<void> {
    return this.changeIndex((entries) => {
      admit(entries)
      return [...entries, this.entryOf(schedule)]
    }, () => this.settings.setSetting(scheduleKey(schedule.id), JSON.stringify(schedule)))
  }

  /** Writes a schedule, then its index entry (the index only says when to look: the schedule is read again before it fires). */
  async save(schedule: WorkflowSchedule): Promise<void> {
    await this.settings.setSetting(scheduleKey(schedule.id), JSON.stringify(schedule))
    await this.syncIndex(schedule)
  }

  /** Makes the index say what `schedule` says (if it is still listed). */
  syncIndex(schedule: WorkflowSchedule): Promise<void> {
    const entry = this.entryOf(schedule)
    return this.changeIndex(entries => entries.some(item => item.id === entry.id) ? entries.map(item => item.id === entry.id ? entry : item) : entries)
  }

  /** Removes the schedules `removed` picks, from the index and the store. */
  async removeWhere(removed: (entry: ScheduleIndexEntry) => boolean): Promise<void> {
    let gone: ScheduleIndexEntry[] = []
    await this.changeIndex((entries) => {
      gone = entries.filter(removed)
      return entries.filter(entry => !removed(entry))
    })
    for (const entry of gone) await this.settings.deleteSettings(scheduleKey(entry.id))
  }

  /** Changes the index under its lock (`before` runs first, under it too). */
  private changeIndex(change: (entries: ScheduleIndexEntry[]) => ScheduleIndexEntry[], before?: () => Promise<void>): Promise<void> {
    return this.withLock(INDEX_KEY, async () => {
      const next = change(await this.index())
      await before?.()
      await this.settings.setSetting(INDEX_KEY, JSON.stringify(next))
    })
  }

  /**
   * Runs `work` holding lock `key` in the store (and here: the store's lock is one per instance),
   * trying `attempts` times; with one attempt, a lock held elsewhere skips the work (undefined).
   */
  withLock<T>(key: string, work: () => Promise<T>): Promise<T>
  withLock<T>(key: string, work: () => Promise<T>, attempts: 1): Promise<T | undefined>
  withLock<T>(key: string, work: () => Promise<T>, attempts?: 1): Promise<T | undefined> {
    return attempts === 1 ? this.locks.run(key, work, 1) : this.locks.run(key, work)
  }
}
