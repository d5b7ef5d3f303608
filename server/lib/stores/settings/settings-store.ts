/**
 * Small named values every instance on the store reads alike (the admin's role limits, tool
 * policy and MCP servers; people's sealed credentials, grants and consents), and the locks that
 * let one instance at a time do what they guard. Kept by the account store's backend (memory,
 * sqlite, Convex); the account store contract pins it.
 */
export interface SettingsStore {
  getSetting(key: string): Promise<string | null>
  setSetting(key: string, value: string): Promise<void>
  /** Removes every setting whose key starts with `prefix` (a deleted user's keys). */
  deleteSettings(prefix: string): Promise<void>
  /**
   * Takes the lock `key` for `owner` until `now + ttlMs`: true when it was free, expired or
   * already `owner`'s. Shared by every instance on the store, so one of them at a time does
   * what the lock guards (an OAuth refresh whose refresh token rotates).
   */
  tryLock(key: string, owner: string, ttlMs: number, now?: number): Promise<boolean>
  /** Gives the lock up, if `owner` holds it. */
  unlock(key: string, owner: string): Promise<void>
}

/** What a reader and writer of settings needs (no deletes, no locks). */
export type SettingsReadWrite = Pick<SettingsStore, 'getSetting' | 'setSetting'>

/** The JSON value kept under `key`, or `empty` when there is none. */
export async function readJsonSetting<T>(store: Pick<SettingsStore, 'getSetting'>, key: string, empty: T): Promise<T> {
  const raw = await store.getSetting(key)
  return raw ? JSON.parse(raw) as T : empty
}
