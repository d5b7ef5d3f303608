/**
 * What the assistant remembers about each person (shared/types/memory.ts): their switch and their
 * memories as one value of the shared settings store, so every backend (memory, SQLite, Convex)
 * and every instance reads the same. Each change is a read and a write under the store's lock, so
 * a `remember` on one instance and an edit in Settings on another both count.
 *
 * Bounded: a memory is at most 500 characters, a person keeps at most `perPerson` (≤ 500, so the
 * value stays far under a Convex document's 1 MiB), and searching is word overlap over what one
 * person keeps (no pattern built from what anyone typed).
 */
import { createHash } from 'node:crypto'
import { MEMORY_MAX_CHARS, type Memory, type MemoryView } from '../../../../shared/types/memory'
import type { SettingsStore } from '../../stores/settings/settings-store'
import { readJsonSetting } from '../../stores/settings/settings-store'
import { SettingLocks } from '../../stores/settings/setting-locks'
import { RefusalError } from '../../domain-error'

export interface MemorySettings {
  /** Memory is offered on this server. */
  enabled: boolean
  /** Memories one person may keep. */
  perPerson: number
  /** Characters of the newest memories put into an answer's instructions (0: none). */
  promptChars: number
}

/** Why `userId` may not use memory (a guest; the tool policy's words), or nothing when they may. */
export type MemoryAvailability = (userId: string) => Promise<Pick<MemoryView, 'unavailable' | 'reason'>>

/** One person's memory as stored. */
interface MemoryBook {
  enabled: boolean
  memories: Memory[]
}

/** A new memory: written by the assistant in a job (its id from the call, so a repeated call is the same memory) or by the person. */
export type NewMemory = { text: string, source: 'person' } | { text: string, source: 'assistant', threadId: string, callKey: string }

const bookKey = (userId: string) => `memory:${userId}:book`
/** Words of at most this many characters of a query are read. */
const MAX_QUERY = 500

/** The words of `text` (letters and digits of any script, lower-cased), for matching. */
export function memoryWords(text: string): Set<string> {
  return new Set(text.slice(0, MAX_QUERY * 2).toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(word => word.length > 1))
}

/** `text` with its spaces made single and its ends trimmed; refused when empty or too long. */
function cleanText(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim()
  if (!clean) throw new RefusalError('A memory needs some text.', 400)
  if (clean.length > MEMORY_MAX_CHARS) throw new RefusalError(`A memory is at most ${MEMORY_MAX_CHARS} characters; this one has ${clean.length}. Keep one short fact per memory.`, 400)
  return clean
}

/** Memories in `memories` matching `query`, best first (more words in common; newer on a tie). */
export function searchMemories(memories: readonly Memory[], query: string, limit: number): Memory[] {
  const wanted = memoryWords(query.slice(0, MAX_QUERY))
  if (wanted.size === 0) return newestFirst(memories).slice(0, limit)
  return memories
    .map(memory => ({ memory, score: [...memoryWords(memory.text)].filter(word => wanted.has(word) || [...wanted].some(other => other.length >= 4 && word.startsWith(other))).length }))
    .filter(hit => hit.score > 0)
    .sort((a, b) => b.score - a.score || b.memory.updatedAt - a.memory.updatedAt)
    .slice(0, limit)
    .map(hit => hit.memory)
}

/** Newest first; of two changed in the same millisecond, the one kept later. */
function newestFirst(memories: readonly Memory[]): Memory[] {
  return memories.map((memory, index) => ({ memory, index })).sort((a, b) => b.memory.updatedAt - a.memory.updatedAt || b.index - a.index).map(({ memory }) => memory)
}

export class Memories {
  private readonly locks: SettingLocks

  constructor(
    private readonly settings: Pick<SettingsStore, 'getSetting' | 'setSetting' | 'deleteSettings' | 'tryLock' | 'unlock'>,
    readonly limits: MemorySettings,
    private readonly availability: MemoryAvailability = async () => ({}),
    private readonly now: () => number = Date.now,
  ) {
    this.locks = new SettingLocks(settings, crypto.randomUUID(), { ttlMs: 10_000, attempts: 80, now, busyMessage: 'Your memories are being changed elsewhere; try again in a moment.' })
  }

  private async read(userId: string): Promise<MemoryBook> {
    return (await readJsonSetting<MemoryBook | null>(this.settings, bookKey(userId), null)) ?? { enabled: false, memories: [] }
  }

  /** Reads, changes and writes `userId`'s memory under the store's lock. */
  private async change<T>(userId: string, work: (book: MemoryBook) => T): Promise<T> {
    try {
      return await this.locks.run(bookKey(userId), async () => {
        const book = await this.read(userId)
        const result = work(book)
        await this.settings.setSetting(bookKey(userId), JSON.stringify(book))
        return result
      })
    } catch (error) {
      if (error instanceof Error && !(error instanceof RefusalError) && error.message.startsWith('Your memories are being changed')) throw new RefusalError(error.message, 409)
      throw error
    }
  }

  /** Whether `userId` turned memory on, and their memories, newest first. */
  async view(userId: string): Promise<{ enabled: boolean, memories: Memory[] }> {
    const book = await this.read(userId)
    return { enabled: book.enabled, memories: newestFirst(book.memories) }
  }

  /** What Settings → Memory shows `userId`: the switch, why memory cannot be used (if so), every memory. */
  async viewFor(userId: string): Promise<MemoryView> {
    const [book, availability] = await Promise.all([this.view(userId), this.limits.enabled ? this.availability(userId) : { unavailable: 'off' as const }])
    return { ...book, ...availability, max: this.limits.perPerson }
  }

  /** Whether the memory tools may run for `userId`: memory on here and turned on by them. */
  async isEnabled(userId: string): Promise<boolean> {
    return this.limits.enabled && (await this.read(userId)).enabled
  }

  /** Turns memory on or off; off keeps the memories (the person deletes them with `clear`). On is refused where memory cannot be used. */
  async setEnabled(userId: string, enabled: boolean): Promise<void> {
    if (enabled) {
      const { unavailable, reason } = this.limits.enabled ? await this.availability(userId) : { unavailable: 'off', reason: undefined }
      if (unavailable === 'off') throw new RefusalError('Memory is off on this server (NUXT_TOOLS_MEMORY_ENABLED).', 409)
      if (unavailable === 'guest') throw new RefusalError('Memory is for accounts: sign up to keep memories.', 409)
      if (unavailable) throw new RefusalError(`Memory is not allowed for you: ${reason ?? 'the tool policy denies it'}.`, 409)
    }
    await this.change(userId, (book) => {
      book.enabled = enabled
    })
  }

  /**
   * Keeps a new memory (the same text again is the memory already kept, newer). One from the
   * assistant is refused while memory is off; its id comes from its call, so a call repeated after
   * a crash finds the memory it made instead of making a second.
   */
  async add(userId: string, memory: NewMemory): Promise<{ memory: Memory, added: boolean }> {
    const text = cleanText(memory.text)
    const id = memory.source === 'assistant' ? `m-${createHash('sha256').update(memory.callKey).digest('base64url').slice(0, 16)}` : `m-${crypto.randomUUID()}`
    return this.change(userId, (book) => {
      if (memory.source === 'assistant' && !book.enabled) throw new RefusalError('Memory is off for this person: they turn it on in Settings → Memory.', 409)
      const same = book.memories.find(kept => kept.id === id || kept.text.toLowerCase() === text.toLowerCase())
      if (same) {
        same.updatedAt = this.now()
        return { memory: { ...same }, added: false }
      }
      if (book.memories.length >= this.limits.perPerson) throw new RefusalError(`${this.limits.perPerson} memories are kept, the most one person may. Forget some first (Settings → Memory).`, 409)
      const now = this.now()
      const kept: Memory = { id, text, source: memory.source, ...(memory.source === 'assistant' ? { threadId: memory.threadId } : {}), createdAt: now, updatedAt: now }
      book.memories.push(kept)
      return { memory: { ...kept }, added: true }
    })
  }

  /** Changes the text of one memory (404 when there is none by that id). */
  async update(userId: string, id: string, text: string): Promise<Memory> {
    const clean = cleanText(text)
    return this.change(userId, (book) => {
      const memory = book.memories.find(kept => kept.id === id)
      if (!memory) throw new RefusalError('There is no memory by that id (it may have been deleted).', 404)
      memory.text = clean
      memory.updatedAt = this.now()
      return { ...memory }
    })
  }

  /** Deletes the memories by `ids` (those not there are skipped); returns the ones deleted. */
  remove(userId: string, ids: readonly string[]): Promise<Memory[]> {
    const gone = new Set(ids)
    return this.change(userId, (book) => {
      const removed = book.memories.filter(memory => gone.has(memory.id))
      book.memories = book.memories.filter(memory => !gone.has(memory.id))
      return removed
    })
  }

  /** Deletes every memory (the switch stays as it is). */
  async clear(userId: string): Promise<number> {
    return this.change(userId, (book) => {
      const count = book.memories.length
      book.memories = []
      return count
    })
  }

  /** `userId`'s memories matching `query` (the newest without one), at most `limit`. */
  async search(userId: string, query: string, limit: number): Promise<{ memories: Memory[], total: number }> {
    const book = await this.read(userId)
    return { memories: searchMemories(book.memories, query, limit), total: book.memories.length }
  }

  /**
   * What an answer's instructions say of `userId`'s memories: the newest that fit in `promptChars`,
   * with their ids (so the model can forget one), or undefined when memory is off or empty.
   */
  async promptFor(userId: string): Promise<string | undefined> {
    if (this.limits.promptChars === 0 || !this.limits.enabled) return undefined
    const book = await this.read(userId)
    if (!book.enabled || book.memories.length === 0) return undefined
    const lines: string[] = []
    let used = 0
    for (const memory of newestFirst(book.memories)) {
      const line = `- (${memory.id}) ${memory.text}`
      if (used + line.length > this.limits.promptChars) break
      lines.push(line)
      used += line.length + 1
    }
    if (lines.length === 0) return undefined
    const more = book.memories.length - lines.length
    return [
      'What you remember about this person from earlier conversations (they see and change these in Settings → Memory). Use it where it helps; keep what you newly learn about them with `remember`, and `forget` a memory when they ask you to:',
      ...lines,
      ...(more > 0 ? [`(${more} older memories: \`recall\` searches them.)`] : []),
    ].join('\n')
  }

  deleteUser(userId: string): Promise<void> {
    return this.settings.deleteSettings(`memory:${userId}:`)
  }
}
