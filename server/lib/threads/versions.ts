/**
 * A thread's messages form a tree: each message follows its parent (the previous turn of its
 * branch; the thread's id for a first message). Messages with the same parent and role are
 * versions of each other: a regenerated answer, or an edited question with everything after it.
 * The thread shows one branch, the path from its first message to its active message (the one the
 * user picked, else the newest).
 *
 * Messages stored before versions have no parent: each follows the one stored before it, so an
 * old thread reads as the single branch it was.
 */
import type { ThreadStore } from '../stores/threads/thread-store'
import type { ChatThread, ThreadMessage, ThreadPathMessage, ThreadWithMessages } from '../../../shared/types/thread'
import { DomainError, type HttpAnswer } from '../domain-error'

/** The messages of a thread as a tree. */
export interface MessageTree {
  byId: ReadonlyMap<string, ThreadMessage>
  /** Each message's parent id (the thread's id for a first message). */
  parentOf: ReadonlyMap<string, string>
  /** Each parent's children, oldest first. */
  childrenOf: ReadonlyMap<string, ThreadMessage[]>
}

/** Builds the tree of `messages` (oldest first, as every store lists them). */
export function messageTree(threadId: string, messages: readonly ThreadMessage[]): MessageTree {
  const byId = new Map<string, ThreadMessage>()
  const parentOf = new Map<string, string>()
  const childrenOf = new Map<string, ThreadMessage[]>()
  let previous = threadId
  for (const message of messages) {
    byId.set(message.id, message)
    const parent = message.parentId ?? previous
    parentOf.set(message.id, parent)
    const children = childrenOf.get(parent)
    if (children) children.push(message)
    else childrenOf.set(parent, [message])
    previous = message.id
  }
  return { byId, parentOf, childrenOf }
}

/** The newest message at the end of the branch that goes through `messageId` (taking the newest child at each turn). */
export function branchEnd(tree: MessageTree, messageId: string): string {
  let current = messageId
  // Each step goes to a newer message, so the walk ends; the bound guards against a corrupt store.
  for (let steps = 0; steps <= tree.byId.size; steps++) {
    const children = tree.childrenOf.get(current)
    if (!children?.length) return current
    current = children[children.length - 1]!.id
  }
  return current
}

/** The ids from the first message down to `messageId`. */
export function pathTo(tree: MessageTree, threadId: string, messageId: string): string[] {
  const path: string[] = []
  let current: string | undefined = messageId
  while (current !== undefined && current !== threadId && tree.byId.has(current) && path.length <= tree.byId.size) {
    path.push(current)
    current = tree.parentOf.get(current)
  }
  return path.reverse()
}

/** The versions of `message`: its siblings of the same role, oldest first (undefined when it has none). */
function versionsOf(tree: MessageTree, message: ThreadMessage) {
  const siblings = (tree.childrenOf.get(tree.parentOf.get(message.id)!) ?? []).filter(sibling => sibling.role === message.role)
  if (siblings.length < 2) return undefined
  return { ids: siblings.map(sibling => sibling.id), index: siblings.findIndex(sibling => sibling.id === message.id) }
}

/** The id of answer `index` of a question answered by several models side by side (`turn`: a UUID the turn's answers share). */
export function sideBySideAnswerId(turn: string, index: number): string {
  return `side-${turn}-${index}`
}

/** The turn an answer answered side by side belongs to (undefined for any other message). */
function sideBySideTurn(id: string): string | undefined {
  return /^side-([0-9a-f-]{36})-\d{1,2}$/.exec(id)?.[1]
}

/**
 * The answers started together with `message` for one question (models side by side, see
 * send-message.ts: their ids name the turn they share), in the order they were asked for; undefined
 * for any other message.
 */
function answeredTogether(tree: MessageTree, message: ThreadMessage): ThreadMessage[] | undefined {
  const turn = message.role === 'assistant' ? sideBySideTurn(message.id) : undefined
  if (!turn) return undefined
  const together = (tree.childrenOf.get(tree.parentOf.get(message.id)!) ?? []).filter(sibling => sibling.role === 'assistant' && sideBySideTurn(sibling.id) === turn)
  return together.length > 1 ? together : undefined
}

/**
 * The branch `thread` shows: its active message's path (else the newest message's), each message
 * with its versions; its last answer with the answers given beside it, when models were compared.
 */
export function threadPath(thread: ChatThread, messages: readonly ThreadMessage[]): ThreadPathMessage[] {
  if (messages.length === 0) return []
  const tree = messageTree(thread.id, messages)
  const newest = messages.reduce((latest, message) => (message.createdAt >= latest.createdAt ? message : latest))
  const end = thread.activeMessageId && tree.byId.has(thread.activeMessageId) ? thread.activeMessageId : newest.id
  const path = pathTo(tree, thread.id, end)
  return path.map((id, index) => {
    const message = tree.byId.get(id)!
    const versions = versionsOf(tree, message)
    const sideBySide = index === path.length - 1 ? answeredTogether(tree, message) : undefined
    return { ...message, ...(versions ? { versions } : {}), ...(sideBySide ? { sideBySide } : {}) }
  })
}

/** How long an answer may be stored without its job before it counts as never started. */
export const UNSTARTED_AFTER_MS = 60_000

/**
 * Answers stored without a job for longer than `UNSTARTED_AFTER_MS`: the server stopped between
 * storing one and starting its job (a crash mid-send; with several models side by side, between
 * two of their starts). Each is marked failed, saying so, in the store and in what is returned,
 * rather than showing as running forever.
 */
async function settleUnstarted(threads: ThreadStore, messages: ThreadMessage[], now: number): Promise<ThreadMessage[]> {
  const error = { message: 'This answer never started: the server stopped before its job began. Ask again.' }
  const stale = messages.filter(message => message.role === 'assistant' && message.status === 'streaming' && !message.jobId && now - message.createdAt > UNSTARTED_AFTER_MS)
  for (const message of stale) await threads.updateMessage(message.id, { status: 'error', error })
  const settled = new Set(stale.map(message => message.id))
  return settled.size ? messages.map(message => settled.has(message.id) ? { ...message, status: 'error' as const, error } : message) : messages
}

/** Why a message cannot get a new version: 404 not in this thread, 400 the wrong kind of message or body. */
export class MessageVersionError extends DomainError {
  readonly statusCode: 400 | 404
  constructor(message: string, statusCode: 400 | 404) {
    super(message)
    this.name = 'MessageVersionError'
    this.statusCode = statusCode
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: this.statusCode === 404 ? 'No such message' : 'Cannot make that version', message: this.message }
  }

  static isInstance(error: unknown): error is MessageVersionError {
    return error instanceof Error && error.name === 'MessageVersionError'
  }
}

/**
 * `thread` with the messages of the branch on view. With `show`, the branch through that message
 * (a version the person picked) becomes the one on view first; 404 when the thread has no such message.
 */
export async function viewThread(threads: ThreadStore, thread: ChatThread, show?: string, now = Date.now()): Promise<ThreadWithMessages> {
  const all = await settleUnstarted(threads, await threads.listMessages(thread.id), now)
  if (show !== undefined) {
    const tree = messageTree(thread.id, all)
    if (!tree.byId.has(show)) throw new MessageVersionError('This conversation has no such message.', 404)
    const activeMessageId = branchEnd(tree, show)
    await threads.setActiveMessage(thread.id, activeMessageId)
    thread = { ...thread, activeMessageId }
  }
  return { thread, messages: threadPath(thread, all) }
}
