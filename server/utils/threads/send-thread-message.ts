import type { H3Event } from 'h3'
import { threadHistory } from '../../lib/threads/thread-history'
import { resolveChatEndpoint } from '../chat/chat-endpoint'
import { throwJobStartError } from '../background-jobs/start-chat-job'
import { titleFromMessage, type ChatThread, type ThreadMessage } from './types'

/** What the composer sends. */
export interface SendThreadMessageInput {
  content: string
  model: string
  /** Server tools to offer; default every enabled one. */
  tools?: string[]
}

/**
 * Adds the user's message to the thread and starts the answer as a background job, recorded as
 * an assistant message that carries the job id (its text is written back when the job ends).
 */
export async function sendThreadMessage(event: H3Event, thread: ChatThread, input: SendThreadMessageInput): Promise<{ userMessage: ThreadMessage, assistantMessage: ThreadMessage, jobId: string }> {
  const jobs = useBackgroundJobs()
  const store = useThreadStore()
  const userApiKey = getHeader(event, 'x-openrouter-key')?.trim() || undefined
  // Refuse before anything is stored: over a cap, or a model that needs a key nobody gave.
  try {
    jobs.checkCapacity(thread.userId)
    resolveChatEndpoint(input.model, useServerConfig(event), userApiKey)
  } catch (error) {
    throwJobStartError(event, error)
  }

  const earlier = await store.listMessages(thread.id)
  const messages = threadHistory(earlier, input.content)
  const now = Date.now()
  const userMessage = await store.appendMessage({ threadId: thread.id, role: 'user', content: input.content, now })
  if (earlier.length === 0 && thread.title === 'New chat') await store.renameThread(thread.id, titleFromMessage(input.content), now)
  const assistantId = crypto.randomUUID()
  const assistantMessage = await store.appendMessage({ id: assistantId, threadId: thread.id, role: 'assistant', content: '', model: input.model, status: 'streaming', now: now + 1 })

  try {
    const job = await jobs.startChatJob({
      userId: thread.userId,
      threadId: thread.id,
      messageId: assistantId,
      userApiKey,
      request: { model: input.model, messages, fields: {}, toolNames: input.tools },
    })
    await store.updateMessage(assistantId, { jobId: job.id })
    return { userMessage, assistantMessage: { ...assistantMessage, jobId: job.id }, jobId: job.id }
  } catch (error) {
    await store.updateMessage(assistantId, { status: 'error', error: { message: error instanceof Error ? error.message : 'The answer could not start.' } })
    throwJobStartError(event, error)
  }
}
