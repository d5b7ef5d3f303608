/**
 * Share links: a read-only snapshot of a conversation at an unguessable URL. The snapshot is the
 * list of the branch's finished messages when it was shared (messages are never changed once
 * finished, so later turns, edits and answers stay out); it dies with its conversation.
 *
 * Kept in the settings store every instance shares: `share:<hash>` per link, looked up by the
 * SHA-256 of its token (the token itself only sealed, so its owner can copy the link again), and
 * a per-person index `personal:<userId>:shares` (removed with the account). At most
 * `PERSONAL_LIMITS.sharesPerUser` a person.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { SecretBox } from '../security/secret-box'
import { readJsonSetting, type SettingsStore } from '../stores/settings/settings-store'
import { KeyedQueue } from '../stores/settings/keyed-queue'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { StorageQuotas } from '../stores/quotas'
import { checkAttachmentQuota, checkMessageQuota } from '../stores/quotas'
import { RefusalError } from '../domain-error'
import { threadPath } from './versions'
import type { ChatThread, ThreadMessage } from '../../../shared/types/thread'
import type { MessageAttachment } from '../../../shared/types/attachment'
import type { SessionPrincipal } from '../../../shared/types/account'
import { PERSONAL_LIMITS, type ShareLinkSummary, type SharedConversation } from '../../../shared/types/personal'

/** A share link as kept. */
interface StoredShare {
  id: string
  userId: string
  threadId: string
  title: string
  messageIds: string[]
  includeAttachments: boolean
  createdAt: number
  sealedToken: string
}

const GONE = 'This share link does not exist or was revoked.'
/** A token: 24 random bytes, base64url (32 characters). */
const TOKEN = /^[\w-]{32}$/
const PUBLIC_KEY = 'instance:share-links-public'
const shareKey = (id: string) => `share:${id}`
const indexKey = (userId: string) => `personal:${userId}:shares`
const idOf = (token: string) => createHash('sha256').update(token).digest('hex')
/** A message as a snapshot shows it: finished (a user's turn, or an answer with text that ended). */
const finished = (message: ThreadMessage) => message.role === 'user' || (message.status === 'complete' && message.content.trim() !== '')

/** Who opens a link: a session's principal, or null for nobody signed in. */
type Viewer = Pick<SessionPrincipal, 'id' | 'role'> | null

/** A shared snapshot, opened: the conversation's messages in it, and the link as kept. */
interface OpenedShare {
  share: StoredShare
  messages: ThreadMessage[]
}

/** Creates, lists, opens, copies and revokes share links. */
export class ShareLinks {
  private readonly queue = new KeyedQueue()

  constructor(private readonly options: {
    settings: SettingsStore
    threads: ThreadStore
    secretBox: SecretBox
    quotas: StorageQuotas
    /** How a sharer is named to viewers (their display name). */
    nameOf: (userId: string) => Promise<string>
  }) {}

  /** Shares the branch on view of `thread` as it is now. `origin` makes the link's URL. */
  async create(thread: ChatThread, input: { includeAttachments: boolean, origin: string }, now = Date.now()): Promise<ShareLinkSummary> {
    return this.queue.run(indexKey(thread.userId), () => this.add(thread, input, now))
  }

  private async add(thread: ChatThread, input: { includeAttachments: boolean, origin: string }, now: number): Promise<ShareLinkSummary> {
    let ids = await this.index(thread.userId)
    // At the limit, entries whose link is gone (a crash between writing a link and its index
    // entry's removal) do not count.
    if (ids.length >= PERSONAL_LIMITS.sharesPerUser) ids = (await Promise.all(ids.map(async id => (await this.read(id)) ? id : undefined))).filter(id => id !== undefined)
    if (ids.length >= PERSONAL_LIMITS.sharesPerUser) throw new RefusalError(`You have ${PERSONAL_LIMITS.sharesPerUser} share links, the most allowed. Revoke one in Settings first.`, 409)
    const messages = threadPath(thread, await this.options.threads.listMessages(thread.id)).filter(finished)
    if (messages.length === 0) throw new RefusalError('This conversation has no finished message to share yet.', 400)
    const token = randomBytes(24).toString('base64url')
    const share: StoredShare = {
      id: idOf(token), userId: thread.userId, threadId: thread.id, title: thread.title,
      messageIds: messages.map(message => message.id), includeAttachments: input.includeAttachments, createdAt: now,
      sealedToken: this.options.secretBox.seal(token),
    }
    await this.options.settings.setSetting(shareKey(share.id), JSON.stringify(share))
    await this.options.settings.setSetting(indexKey(thread.userId), JSON.stringify([...ids, share.id]))
    return this.summary(share, input.origin)
  }

  /** Whether links open for anyone with them (the admin's choice; default: signed-in accounts of this server only). */
  async openToAnyone(): Promise<boolean> {
    return await this.options.settings.getSetting(PUBLIC_KEY) === 'true'
  }

  async setOpenToAnyone(open: boolean): Promise<void> {
    await this.options.settings.setSetting(PUBLIC_KEY, String(open))
  }

  /** A person's links, newest first. */
  async list(userId: string, origin: string): Promise<ShareLinkSummary[]> {
    const shares = await Promise.all((await this.index(userId)).map(id => this.read(id)))
    return shares.filter(share => share?.userId === userId).map(share => this.summary(share!, origin)).reverse()
  }

  /** Revokes one of `userId`'s links (its id as listed); false when they have no such link. */
  async revoke(userId: string, id: string): Promise<boolean> {
    return (await this.revokeWhere(userId, linkId => linkId === id)) > 0
  }

  /** Revokes every link to `threadId` (the conversation is deleted). */
  async revokeThread(userId: string, threadId: string): Promise<void> {
    await this.revokeWhere(userId, (_id, share) => share?.threadId === threadId)
  }

  /**
   * Takes the entries of `userId`'s index that `matches` (given each id and its link, null when
   * gone) out, deleting their links, and answers how many links it deleted. The links go first,
   * then the index in one write: a failure between the two leaves entries to links that open
   * nothing (not counted, see `add`).
   */
  private revokeWhere(userId: string, matches: (id: string, share: StoredShare | null) => boolean): Promise<number> {
    return this.queue.run(indexKey(userId), async () => {
      const ids = await this.index(userId)
      const taken = new Set<string>()
      let revoked = 0
      for (const id of ids) {
        const share = await this.read(id)
        if (!matches(id, share)) continue
        taken.add(id)
        if (share?.userId !== userId) continue
        await this.options.settings.deleteSettings(shareKey(id))
        revoked++
      }
      if (taken.size > 0) await this.options.settings.setSetting(indexKey(userId), JSON.stringify(ids.filter(id => !taken.has(id))))
      return revoked
    })
  }

  /** Revokes every link of `userId` (a deleted account). */
  async deleteUser(userId: string): Promise<void> {
    for (const id of await this.index(userId)) await this.options.settings.deleteSettings(shareKey(id))
  }

  /**
   * The snapshot a token opens, as `viewer` sees it (null: nobody signed in); 404 for a token that
   * was never made, revoked, or whose conversation is gone; 401 when links are for accounts only.
   */
  async view(token: string, viewer: Viewer): Promise<SharedConversation> {
    const { share, messages } = await this.open(token, viewer)
    return {
      title: share.title,
      sharedAt: share.createdAt,
      sharedBy: await this.options.nameOf(share.userId),
      messages: messages.map(message => ({
        id: message.id, role: message.role, content: message.content, createdAt: message.createdAt,
        ...(message.model ? { model: message.model } : {}),
        ...(share.includeAttachments && message.attachments?.length ? { attachments: message.attachments } : {}),
      })),
    }
  }

  /** A file of the snapshot, when the sharer included files and it belongs to one of its messages; else 404. */
  async attachment(token: string, attachmentId: string, viewer: Viewer) {
    const { share, messages } = await this.open(token, viewer)
    const inSnapshot = share.includeAttachments && messages.some(message => message.attachments?.some(file => file.id === attachmentId))
    const stored = inSnapshot ? await this.options.threads.readAttachment(attachmentId) : null
    if (!stored || stored.threadId !== share.threadId) throw new RefusalError('This share link has no such file.', 404)
    return stored
  }

  /**
   * "Continue this conversation": a new conversation of `userId`'s holding a copy of the snapshot
   * (with its files when the sharer included them), within their quotas.
   */
  async copy(token: string, viewer: Pick<SessionPrincipal, 'id' | 'role'>, now = Date.now()): Promise<ChatThread> {
    const userId = viewer.id
    const { share, messages } = await this.open(token, viewer)
    const { threads, quotas } = this.options
    checkMessageQuota(0, messages.length, quotas)
    const files = share.includeAttachments ? messages.flatMap(message => message.attachments ?? []) : []
    checkAttachmentQuota(files.length ? await threads.attachmentBytes(userId) : 0, files.reduce((total, file) => total + file.size, 0), quotas)
    const thread = await threads.createThread({ userId, title: share.title, now })
    let parentId = thread.id
    for (const [index, message] of messages.entries()) {
      const attachments: MessageAttachment[] = []
      if (share.includeAttachments) {
        for (const file of message.attachments ?? []) {
          const stored = await threads.readAttachment(file.id)
          if (!stored) continue
          const copied = { ...file, id: crypto.randomUUID() }
          await threads.addAttachment({ attachment: copied, bytes: stored.bytes, threadId: thread.id, userId, now })
          attachments.push(copied)
        }
      }
      const copied = await threads.appendMessage({
        threadId: thread.id, parentId, role: message.role, content: message.content, now: now + index,
        ...(message.role === 'assistant' ? { status: 'complete' as const, ...(message.model ? { model: message.model } : {}) } : {}),
        ...(attachments.length ? { attachments } : {}),
      })
      parentId = copied.id
    }
    return (await threads.getThread(thread.id)) ?? thread
  }

  private async open(token: string, viewer: Viewer): Promise<OpenedShare> {
    if ((!viewer || viewer.role === 'guest') && !await this.openToAnyone()) throw new RefusalError('Shared conversations on this server open for its accounts only. Sign in to see it.', 401)
    const share = TOKEN.test(token) ? await this.read(idOf(token)) : null
    const thread = share ? await this.options.threads.getThread(share.threadId) : null
    if (!share || !thread || thread.userId !== share.userId) throw new RefusalError(GONE, 404)
    const byId = new Map((await this.options.threads.listMessages(share.threadId)).map(message => [message.id, message]))
    return { share, messages: share.messageIds.map(id => byId.get(id)).filter(message => message !== undefined) }
  }

  private summary(share: StoredShare, origin: string): ShareLinkSummary {
    const token = this.options.secretBox.open(share.sealedToken)
    return {
      id: share.id, threadId: share.threadId, title: share.title,
      url: token ? `${origin}/share/${token}` : '',
      messageCount: share.messageIds.length, includeAttachments: share.includeAttachments, createdAt: share.createdAt,
    }
  }

  private index(userId: string): Promise<string[]> {
    return readJsonSetting(this.options.settings, indexKey(userId), [])
  }

  private read(id: string): Promise<StoredShare | null> {
    return readJsonSetting(this.options.settings, shareKey(id), null)
  }
}
