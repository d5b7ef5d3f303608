/**
 * What a person sets for themselves: preferences (display name, default model, theme, custom
 * instructions), saved chat presets and the folders their conversations are filed in. Small and
 * bounded, so each is one JSON value in the settings store every instance shares, under keys that
 * start `personal:<userId>:` (an account's deletion removes the prefix). Changes to one person's
 * lists go one at a time in this process (KeyedQueue).
 */
import type { SettingsStore } from '../stores/settings/settings-store'
import { KeyedQueue } from '../stores/settings/keyed-queue'
import { RefusalError } from '../domain-error'
import { PERSONAL_LIMITS, type ChatFolder, type ChatPreset, type ChatSettings, type UserPreferences } from '../../../shared/types/personal'

const prefix = (userId: string) => `personal:${userId}:`
const key = (userId: string, what: 'preferences' | 'presets' | 'folders') => `${prefix(userId)}${what}`

/** A person's preferences, presets and folders. */
export class PersonalSettings {
  private readonly queue = new KeyedQueue()

  constructor(private readonly store: SettingsStore) {}

  async preferences(userId: string): Promise<UserPreferences> {
    return this.read(key(userId, 'preferences'), {})
  }

  /** Replaces the person's preferences (a field left out is cleared). */
  async setPreferences(userId: string, preferences: UserPreferences): Promise<UserPreferences> {
    await this.store.setSetting(key(userId, 'preferences'), JSON.stringify(preferences))
    return preferences
  }

  async presets(userId: string): Promise<ChatPreset[]> {
    return this.read(key(userId, 'presets'), [])
  }

  /** Saves a new preset, or with `id` replaces that one; 409 past the per-person limit, 404 for an unknown id. */
  savePreset(userId: string, input: { name: string, settings: ChatSettings }, id?: string): Promise<ChatPreset> {
    return this.change(key(userId, 'presets'), (presets: ChatPreset[]) => {
      if (id === undefined) {
        if (presets.length >= PERSONAL_LIMITS.presetsPerUser) throw new RefusalError(`You have ${PERSONAL_LIMITS.presetsPerUser} presets, the most allowed. Delete one first.`, 409)
        const preset = { id: crypto.randomUUID(), ...input }
        return { list: [...presets, preset], result: preset }
      }
      const at = presets.findIndex(preset => preset.id === id)
      if (at < 0) throw new RefusalError('You have no such preset.', 404)
      const preset = { id, ...input }
      return { list: presets.with(at, preset), result: preset }
    })
  }

  deletePreset(userId: string, id: string): Promise<boolean> {
    return this.change(key(userId, 'presets'), (presets: ChatPreset[]) => ({ list: presets.filter(preset => preset.id !== id), result: presets.some(preset => preset.id === id) }))
  }

  async folders(userId: string): Promise<ChatFolder[]> {
    return this.read(key(userId, 'folders'), [])
  }

  async hasFolder(userId: string, folderId: string): Promise<boolean> {
    return (await this.folders(userId)).some(folder => folder.id === folderId)
  }

  createFolder(userId: string, name: string, now = Date.now()): Promise<ChatFolder> {
    return this.change(key(userId, 'folders'), (folders: ChatFolder[]) => {
      if (folders.length >= PERSONAL_LIMITS.foldersPerUser) throw new RefusalError(`You have ${PERSONAL_LIMITS.foldersPerUser} folders, the most allowed. Delete one first.`, 409)
      const folder = { id: crypto.randomUUID(), name, createdAt: now }
      return { list: [...folders, folder], result: folder }
    })
  }

  renameFolder(userId: string, folderId: string, name: string): Promise<ChatFolder> {
    return this.change(key(userId, 'folders'), (folders: ChatFolder[]) => {
      const at = folders.findIndex(folder => folder.id === folderId)
      if (at < 0) throw new RefusalError('You have no such folder.', 404)
      const folder = { ...folders[at]!, name }
      return { list: folders.with(at, folder), result: folder }
    })
  }

  /**
   * Deletes a folder. Its conversations are not deleted: a folder id its owner no longer has is
   * read as none (`GET /api/threads`, the sidebar), so they show outside any folder at once,
   * whatever store holds them, without a write per conversation.
   */
  deleteFolder(userId: string, folderId: string): Promise<boolean> {
    return this.change(key(userId, 'folders'), (folders: ChatFolder[]) => ({ list: folders.filter(folder => folder.id !== folderId), result: folders.some(folder => folder.id === folderId) }))
  }

  /** Removes everything kept for `userId` (a deleted account). */
  async deleteUser(userId: string): Promise<void> {
    await this.store.deleteSettings(prefix(userId))
  }

  private async read<T>(settingKey: string, empty: T): Promise<T> {
    const raw = await this.store.getSetting(settingKey)
    if (!raw) return empty
    try {
      return JSON.parse(raw) as T
    } catch {
      return empty
    }
  }

  /** Reads a list, applies `edit`, writes it back: one change per key at a time in this process. */
  private change<T, R>(settingKey: string, edit: (list: T[]) => { list: T[], result: R }): Promise<R> {
    return this.queue.run(settingKey, async () => {
      const { list, result } = edit(await this.read<T[]>(settingKey, []))
      await this.store.setSetting(settingKey, JSON.stringify(list))
      return result
    })
  }
}
