/**
 * Work done under a lock of the settings store: one instance at a time (the store's lock), and
 * within this instance one caller at a time (the store's lock is one per owner, so it says "mine"
 * to every caller of this instance).
 */
import type { SettingsStore } from './settings-store'

export interface SettingLockOptions {
  /** How long a lock holds if its holder dies. */
  ttlMs: number
  /** Tries at the lock before giving up (25-75 ms apart). */
  attempts: number
  /** What the error says when the lock stayed taken. */
  busyMessage: string
  now?: () => number
}

/** Runs work under named locks of `settings`, as `owner`. */
export class SettingLocks {
  private readonly local = new Map<string, Promise<unknown>>()

  constructor(private readonly settings: Pick<SettingsStore, 'tryLock' | 'unlock'>, private readonly owner: string, private readonly options: SettingLockOptions) {}

  /** Runs `work` holding lock `key`; with one attempt, a lock held elsewhere skips the work (undefined). */
  run<T>(key: string, work: () => Promise<T>): Promise<T>
  run<T>(key: string, work: () => Promise<T>, attempts: 1): Promise<T | undefined>
  run<T>(key: string, work: () => Promise<T>, attempts = this.options.attempts): Promise<T | undefined> {
    const now = this.options.now ?? Date.now
    const previous = this.local.get(key) ?? Promise.resolve()
    const run = previous.catch(() => {}).then(async () => {
      for (let attempt = 0; attempt < attempts; attempt++) {
        if (attempt > 0) await new Promise(resolve => setTimeout(resolve, 25 + Math.random() * 50))
        if (await this.settings.tryLock(key, this.owner, this.options.ttlMs, now())) {
          try {
            return await work()
          } finally {
            await this.settings.unlock(key, this.owner)
          }
        }
      }
      if (attempts === 1) return undefined
      throw new Error(this.options.busyMessage)
    })
    const settled = run.catch(() => {})
    this.local.set(key, settled)
    void settled.then(() => this.local.get(key) === settled && this.local.delete(key))
    return run
  }
}
