/**
 * Sending a message in a thread: the user's turn is stored and the answer starts as a background
 * job, recorded as an assistant message that carries the job id (its text is written back when
 * the job ends, by the runtime's `onJobFinished`). Editing a question or answering it again does
 * the same as a new version of that message (see versions.ts).
 */
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobManager, JobPrincipal } from '../jobs/manager'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import { checkMessageQuota } from '../stores/quotas'
import type { ThreadStore } from '../stores/threads/thread-store'
import { threadHistory } from './history'
import { titleFromMessage } from './titles'
import type { ChatThread, SentThreadMessage, ThreadMessage } from '../../../shared/types/thread'
import { MessageVersionError, messageTree, pathTo, threadPath } from './versions'
import { z } from 'zod'
import { assertClientToolsFree, clientToolsSchema } from '../tools/client-tools'

const answerFields = {
  model: z.string().trim().min(1, 'choose a model').max(200),
  /** Server tools to offer; default every enabled one. */
  tools: z.array(z.string().max(64)).max(100).optional(),
  /** Tools this browser runs for the answer (get_user_location, read_clipboard…). */
  clientTools: clientToolsSchema.optional(),
}
const messageContent = z.string().trim().min(1, 'write a message').max(100_000)

/** What the composer sends (`POST /api/threads/:id/messages`). */
export const threadMessageSchema = z.object({ content: messageContent, ...answerFields }).strict()

/**
 * A new version of a message (`POST /api/threads/:id/messages/:messageId/versions`): the edited
 * text of a question (`content`), or nothing more than the model for another answer.
 */
export const messageVersionSchema = z.object({ content: messageContent.optional(), ...answerFields }).strict()

/** What the composer sends. */
export type SendThreadMessageInput = z.output<typeof threadMessageSchema>
/** What a new version of a message is made with. */
export type MessageVersionInput = z.output<typeof messageVersionSchema>
type AnswerInput = Omit<SendThreadMessageInput, 'content'> & { principal: JobPrincipal, userApiKey?: string }
type Dependencies = { jobs: BackgroundJobManager, threads: ThreadStore, config: ServerConfig }

/** The question an answer is for: one already stored (another answer), or new text under a parent. */
type Question = { stored: ThreadMessage } | { content: string, parentId: string }

/**
 * Sends `input` in `thread` for `input.principal`, after the last message of the branch on view.
 * Refuses before anything is stored when admission does (its model, caps, rate or budget), the
 * model needs a key nobody gave, or the thread is full (`MissingApiKeyError`,
 * `StorageQuotaError`); a job that then fails to start marks its assistant message as failed and
 * rethrows.
 */
export async function sendThreadMessage(dependencies: Dependencies, thread: ChatThread, input: SendThreadMessageInput & AnswerInput): Promise<SentThreadMessage> {
  const all = await dependencies.threads.listMessages(thread.id)
  const branch = threadPath(thread, all)
  return answer(dependencies, thread, all, branch, { content: input.content, parentId: branch.at(-1)?.id ?? thread.id }, input)
}

/**
 * A new version of `messageId`: for a question, `input.content` replaces it (the old question and
 * everything after it stay as the other version) and is answered; for an answer, the same question
 * is answered again. The new version becomes the branch on view.
 */
export async function addMessageVersion(dependencies: Dependencies, thread: ChatThread, messageId: string, input: MessageVersionInput & AnswerInput): Promise<SentThreadMessage> {
  const all = await dependencies.threads.listMessages(thread.id)
  const tree = messageTree(thread.id, all)
  const target = tree.byId.get(messageId)
  if (!target) throw new MessageVersionError('This conversation has no such message.', 404)
  const history = (id: string) => pathTo(tree, thread.id, id).map(id => tree.byId.get(id)!)
  if (target.role === 'user') {
    if (input.content === undefined) throw new MessageVersionError('content: write the new text of the question.', 400)
    const parentId = tree.parentOf.get(target.id)!
    return answer(dependencies, thread, all, history(parentId), { content: input.content, parentId }, input)
  }
  if (input.content !== undefined) throw new MessageVersionError('content: an answer is not edited; leave content out to answer again.', 400)
  const question = tree.byId.get(tree.parentOf.get(target.id)!)
  if (question?.role !== 'user') throw new MessageVersionError('This answer has no question to answer again.', 400)
  return answer(dependencies, thread, all, history(tree.parentOf.get(question.id)!), { stored: question }, input)
}

/** Stores the question (unless stored) and an assistant message for its answer, and starts the answer's job. */
async function answer(dependencies: Dependencies, thread: ChatThread, all: ThreadMessage[], before: ThreadMessage[], question: Question, input: AnswerInput): Promise<SentThreadMessage> {
  const { jobs, threads, config } = dependencies
  checkMessageQuota(all.length, 'stored' in question ? 1 : 2, config.limits)
  assertClientToolsFree(input.clientTools)
  const admission = await jobs.admit(input.principal, { models: [input.model] })
  resolveChatEndpoint(input.model, config, input.userApiKey)
  const content = 'stored' in question ? question.stored.content : question.content
  const messages = threadHistory(before, content)
  const now = Date.now()
  const userMessage = 'stored' in question
    ? question.stored
    : await threads.appendMessage({ threadId: thread.id, parentId: question.parentId, role: 'user', content, now })
  if (all.length === 0 && thread.title === 'New chat') await threads.renameThread(thread.id, titleFromMessage(content), now)
  const assistantId = crypto.randomUUID()
  const assistantMessage = await threads.appendMessage({ id: assistantId, threadId: thread.id, parentId: userMessage.id, role: 'assistant', content: '', model: input.model, status: 'streaming', now: now + 1 })
  await threads.setActiveMessage(thread.id, assistantId)

  try {
    const job = await jobs.startChatJob({
      principal: input.principal,
      threadId: thread.id,
      messageId: assistantId,
      userApiKey: input.userApiKey,
      request: { model: input.model, messages, fields: {}, toolNames: input.tools, ...(input.clientTools?.length ? { clientTools: input.clientTools } : {}) },
    }, admission)
    await threads.updateMessage(assistantId, { jobId: job.id })
    return { userMessage, assistantMessage: { ...assistantMessage, jobId: job.id }, jobId: job.id }
  } catch (error) {
    await threads.updateMessage(assistantId, { status: 'error', error: { message: error instanceof Error ? error.message : 'The answer could not start.' } })
    throw error
  }
}
