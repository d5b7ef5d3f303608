/**
 * What the assistant remembers about a person between conversations: short facts, kept only while
 * the person has memory on, each one theirs to read, change and delete (Settings → Memory).
 */

/** The longest one memory may be (characters). */
export const MEMORY_MAX_CHARS = 500

/** One remembered fact. */
export interface Memory {
  id: string
  text: string
  /** Who wrote it: the assistant (`remember`) or the person (Settings → Memory). */
  source: 'assistant' | 'person'
  /** The conversation the assistant was in when it remembered it. */
  threadId?: string
  createdAt: number
  updatedAt: number
}

/** `GET /api/me/memory`: the switch, whether it may be on, and every memory (newest first). */
export interface MemoryView {
  /** The person turned memory on. */
  enabled: boolean
  /** Why memory cannot be used by this person (off on this server, a guest, the tool policy), or undefined. */
  unavailable?: 'off' | 'guest' | 'policy'
  /** The policy's words when `unavailable` is `policy`. */
  reason?: string
  memories: Memory[]
  /** Memories one person may keep. */
  max: number
}
