/**
 * Conversations' message queues as the server runs them (threads/message-queue.ts): a queued
 * message is asked like one sent from the composer, as its conversation's owner is now (their
 * role, instructions, memories, groups and the conversation's knowledge bases), with the person's
 * own API key sealed while it waits.
 */
import type { AccountService } from '../auth/accounts'
import type { BackgroundJobManager } from '../jobs/manager'
import type { ServerConfig } from '../config/server-config'
import type { KnowledgeBases } from '../knowledge/knowledge-bases'
import type { SecretBox } from '../security/secret-box'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { PersonalSettings } from '../threads/personal-settings'
import { MessageQueue } from '../threads/message-queue'
import type { Memories } from '../tools/memory/memories'
import { RefusalError } from '../domain-error'

/** What the queue asks with. */
export interface MessageQueueServices {
  threads: ThreadStore
  jobs: BackgroundJobManager
  config: ServerConfig
  accounts: AccountService
  personal: PersonalSettings
  memories: Memories
  knowledge: KnowledgeBases
  secretBox: SecretBox
  logger: { warn: (message: string, error?: unknown) => void }
}

/** The queues of every conversation, sending as their owners. */
export function createMessageQueue({ threads, jobs, config, accounts, personal, memories, knowledge, secretBox, logger }: MessageQueueServices): MessageQueue {
  return new MessageQueue({
    threads,
    jobs,
    config,
    logger,
    keys: { seal: key => secretBox.seal(key), open: sealed => secretBox.open(sealed) },
    answering: async (thread) => {
      const owner = await accounts.policyPrincipal(thread.userId)
      if (owner.disabled) throw new RefusalError('This account is disabled.', 403)
      const bases = thread.settings?.knowledgeBaseIds ?? []
      const [{ customInstructions, locale }, memoriesPrompt, team] = await Promise.all([
        personal.preferences(thread.userId),
        memories.promptFor(thread.userId),
        accounts.groups.chatSettingsOf(thread.userId),
      ])
      return {
        principal: { userId: thread.userId, role: owner.role, ...(locale ? { locale } : {}) },
        instructions: customInstructions,
        memories: memoriesPrompt,
        team: team.instructions,
        ...(bases.length ? { knowledgeFor: (question: string) => knowledge.promptFor(thread.userId, bases, question) } : {}),
      }
    },
  })
}
