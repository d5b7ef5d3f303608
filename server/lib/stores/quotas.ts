/**
 * How much one user may keep: conversations, messages per conversation, saved workflows (the
 * `limits` config). Creating past a quota throws `StorageQuotaError` (409, saying what to delete).
 * The checks count before they write, so requests racing each other may pass a quota by a few;
 * they bound growth, they are not an exact ledger.
 */
import type { ThreadStore } from './threads/thread-store'
import type { WorkflowStore } from './workflows/workflow-store'
import { DomainError, type HttpAnswer } from '../domain-error'

/** The quotas, from `limits` in the runtime config. */
export interface StorageQuotas {
  threadsPerUser: number
  messagesPerThread: number
  workflowsPerUser: number
  /** Bytes of attached files (0: no limit). */
  attachmentBytesPerUser: number
}

/** What is over its quota. */
export type QuotaKind = 'threads' | 'messages' | 'workflows' | 'attachments'

const ADVICE: Record<QuotaKind, (limit: number) => string> = {
  threads: limit => `You have ${limit.toLocaleString('en')} conversations, the most kept per user. Delete some you no longer need, then start a new one.`,
  messages: limit => `This conversation holds ${limit.toLocaleString('en')} messages, the most one may. Start a new conversation to go on.`,
  attachments: limit => `Your attached files would pass ${(limit / 1024 / 1024).toLocaleString('en', { maximumFractionDigits: 1 })} MiB, the most kept per user. Delete conversations with files you no longer need, or send smaller ones.`,
  workflows: limit => `You have ${limit.toLocaleString('en')} saved workflows, the most kept per user. Delete some you no longer need, then save again.`,
}

/** Raised when a user would keep more than a quota allows. */
export class StorageQuotaError extends DomainError {
  override name = 'StorageQuotaError'
  constructor(readonly kind: QuotaKind, readonly limit: number) {
    super(ADVICE[kind](limit))
  }

  httpAnswer(): HttpAnswer {
    const limit = this.kind === 'attachments' ? Math.round(this.limit / 1024 / 1024 * 10) / 10 : this.limit
    return { statusCode: 409, statusMessage: 'Storage limit reached', message: this.message, i18n: { key: `quota.${this.kind}`, params: { limit } }, data: { quota: this.kind, limit: this.limit }, refusedBy: `storage_${this.kind}` }
  }

  static isInstance(error: unknown): error is StorageQuotaError {
    return error instanceof Error && error.name === 'StorageQuotaError'
  }
}

/** Throws `StorageQuotaError` when a thread that holds `count` messages cannot take `adding` more. */
export function checkMessageQuota(count: number, adding: number, quotas: StorageQuotas): void {
  if (count + adding > quotas.messagesPerThread) throw new StorageQuotaError('messages', quotas.messagesPerThread)
}

/** Throws `StorageQuotaError` when `userId`, keeping `kept` bytes of files, cannot add `adding` more. */
export function checkAttachmentQuota(kept: number, adding: number, quotas: StorageQuotas): void {
  if (adding > 0 && quotas.attachmentBytesPerUser > 0 && kept + adding > quotas.attachmentBytesPerUser) throw new StorageQuotaError('attachments', quotas.attachmentBytesPerUser)
}

/** `store`, refusing a new thread for a user who keeps `threadsPerUser` already. */
export function withThreadQuota(store: ThreadStore, quotas: StorageQuotas): ThreadStore {
  return {
    queue: store.queue,
    createThread: async (input) => {
      const kept = await store.listThreads(input.userId, { limit: quotas.threadsPerUser })
      if (kept.length >= quotas.threadsPerUser) throw new StorageQuotaError('threads', quotas.threadsPerUser)
      return store.createThread(input)
    },
    getThread: threadId => store.getThread(threadId),
    listThreads: (userId, options) => store.listThreads(userId, options),
    renameThread: (threadId, title, now) => store.renameThread(threadId, title, now),
    updateThread: (threadId, patch) => store.updateThread(threadId, patch),
    setActiveMessage: (threadId, messageId) => store.setActiveMessage(threadId, messageId),
    deleteThread: threadId => store.deleteThread(threadId),
    addAttachment: input => store.addAttachment(input),
    readAttachment: attachmentId => store.readAttachment(attachmentId),
    attachmentBytes: userId => store.attachmentBytes(userId),
    appendMessage: message => store.appendMessage(message),
    updateMessage: (messageId, update) => store.updateMessage(messageId, update),
    getMessage: messageId => store.getMessage(messageId),
    listMessages: threadId => store.listMessages(threadId),
    searchThreads: (userId, query, options) => store.searchThreads(userId, query, options),
    setFeedback: (messageId, feedback) => store.setFeedback(messageId, feedback),
    listFeedback: (since, limit) => store.listFeedback(since, limit),
    close: () => store.close(),
  }
}

/** `store`, refusing a new workflow for a user who keeps `workflowsPerUser` already. */
export function withWorkflowQuota(store: WorkflowStore, quotas: StorageQuotas): WorkflowStore {
  return {
    createWorkflow: async (input) => {
      const kept = await store.listWorkflows(input.userId)
      if (kept.length >= quotas.workflowsPerUser) throw new StorageQuotaError('workflows', quotas.workflowsPerUser)
      return store.createWorkflow(input)
    },
    listWorkflows: userId => store.listWorkflows(userId),
    getWorkflow: id => store.getWorkflow(id),
    updateWorkflow: (id, definition, change) => store.updateWorkflow(id, definition, change),
    listWorkflowVersions: id => store.listWorkflowVersions(id),
    getWorkflowVersion: (id, version) => store.getWorkflowVersion(id, version),
    deleteWorkflow: id => store.deleteWorkflow(id),
    close: () => store.close(),
  }
}
