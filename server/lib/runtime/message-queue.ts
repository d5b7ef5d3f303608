/**
 * Conversations' answers as the server asks them, as each conversation's owner is now: their
 * instructions, memories, groups' instructions and the conversation's knowledge bases (one
 * `answerContext` for the composer's messages and the queue's alike), and the message queue, whose
 * sends go as the owner (their role now; the person's own API key sealed while a message waits).
 */
import type { AccountService } from '../auth/accounts'
import type { BackgroundJobManager } from '../jobs/manager'
import type { ServerConfig } from '../config/server-config'
import type { KnowledgeBases } from '../knowledge/knowledge-bases'
import type { SecretBox } from '../security/secret-box'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { PersonalSettings } from '../threads/personal-settings'
import type { ThreadAnswerContext } from '../threads/send-message'
import { MessageQueue } from '../threads/message-queue'
import type { Memories } from '../tools/memory/memories'
import { RefusalError } from '../domain-error'
import type { ChatThread } from '../../../shared/types/thread'

/** Where what an answer is asked with comes from. */
export interface AnswerContextSources {
  accounts: AccountService
  personal: PersonalSettings
  memories: Memories
  knowledge: KnowledgeBases
}

/** What `thread`'s answers are asked with now (see `ThreadAnswerContext`). */
export function answerContextOf({ accounts, personal, memories, knowledge }: AnswerContextSources): (thread: ChatThread) => Promise<ThreadAnswerContext> {
  return async (thread) => {
    const bases = thread.settings?.knowledgeBaseIds ?? []
    const [{ customInstructions, locale }, memoriesPrompt, team] = await Promise.all([
      personal.preferences(thread.userId),
      memories.promptFor(thread.userId),
      accounts.groups.chatSettingsOf(thread.userId),
    ])
    return {
      instructions: customInstructions,
      memories: memoriesPrompt,
      team: team.instructions,
      ...(locale ? { locale } : {}),
      ...(bases.length ? { knowledgeFor: (question: string) => knowledge.promptFor(thread.userId, bases, question) } : {}),
    }
  }
}

/** What the queue asks with. */
export interface MessageQueueServices {
  threads: ThreadStore
  jobs: BackgroundJobManager
  config: ServerConfig
  accounts: AccountService
  answerContext: (thread: ChatThread) => Promise<ThreadAnswerContext>
  secretBox: SecretBox
  logger: { warn: (message: string, error?: unknown) => void }
}

/** The queues of every conversation, sending as their owners. */
export function createMessageQueue({ threads, jobs, config, accounts, answerContext, secretBox, logger }: MessageQueueServices): MessageQueue {
  return new MessageQueue({
    threads,
    jobs,
    config,
    logger,
    keys: { seal: key => secretBox.seal(key), open: sealed => secretBox.open(sealed) },
    answering: async (thread) => {
      const owner = await accounts.policyPrincipal(thread.userId)
      if (owner.disabled) throw new RefusalError('This account is disabled.', 403)
      const { locale, ...context } = await answerContext(thread)
      return { ...context, principal: { userId: thread.userId, role: owner.role, ...(locale ? { locale } : {}) } }
    },
  })
}
