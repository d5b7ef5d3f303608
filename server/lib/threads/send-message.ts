/**
 * Sending a message in a thread: the user's turn is stored and the answer starts as a background
 * job, recorded as an assistant message that carries the job id (its text is written back when
 * the job ends, by the runtime's `onJobFinished`). Editing a question or answering it again does
 * the same as a new version of that message (see versions.ts).
 */
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobManager, JobPrincipal } from '../jobs/manager'
import type { Admission } from '../jobs/admission/gate'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import { checkAttachmentQuota, checkMessageQuota } from '../stores/quotas'
import type { ThreadStore } from '../stores/threads/thread-store'
import { threadHistory } from './history'
import { chatRequestShape, type ChatRequestShape } from './chat-request'
import { titleFromMessage } from './titles'
import type { ChatThread, SentThreadMessage, ThreadMessage } from '../../../shared/types/thread'
import { MessageVersionError, messageTree, pathTo, sideBySideAnswerId, threadPath, type MessageTree } from './versions'
import { z } from 'zod'
import { MAX_SIDE_BY_SIDE } from '../../../shared/limits'
import { assertClientToolsFree, clientToolsSchema } from '../tools/client-tools'
import { acceptAttachments, incomingAttachmentSchema, type AcceptedAttachment } from '../attachments/attachments'
import type { MessageAttachment } from '../../../shared/types/attachment'
import type { AppLocale } from '../../../shared/locales'

const answerFields = {
  model: z.string().trim().min(1, 'choose a model').max(200),
  /** Server tools to offer; default every enabled one. */
  tools: z.array(z.string().max(64)).max(100).optional(),
  /** Tools this browser runs for the answer (get_user_location, read_clipboard…). */
  clientTools: clientToolsSchema.optional(),
}
const messageContent = z.string().trim().min(1, 'write a message').max(100_000)

/**
 * What the composer sends (`POST /api/threads/:id/messages`): text, and files (each checked for what
 * it is, see attachments.ts); with `compareWith`, more models answer the same question side by side.
 */
export const threadMessageSchema = z.object({
  content: z.string().trim().max(100_000),
  attachments: z.array(incomingAttachmentSchema).max(20).optional(),
  ...answerFields,
  compareWith: z.array(answerFields.model).min(1, 'compareWith: name at least one more model, or leave it out').max(MAX_SIDE_BY_SIDE - 1, `compareWith: at most ${MAX_SIDE_BY_SIDE - 1} more models answer side by side`).optional(),
}).strict()
  // Files alone are a message too ("what is this?" is implied).
  .refine(body => body.content.length > 0 || (body.attachments?.length ?? 0) > 0, { message: 'write a message', path: ['content'] })
  .refine(body => !body.compareWith || new Set([body.model, ...body.compareWith]).size === body.compareWith.length + 1, { message: 'name each model once (the first one is `model`)', path: ['compareWith'] })

/**
 * A new version of a message (`POST /api/threads/:id/messages/:messageId/versions`): the edited
 * text of a question (`content`), or nothing more than the model for another answer.
 */
export const messageVersionSchema = z.object({ content: messageContent.optional(), ...answerFields }).strict()

/** What the composer sends. */
export type SendThreadMessageInput = z.output<typeof threadMessageSchema>
/** What a new version of a message is made with. */
export type MessageVersionInput = z.output<typeof messageVersionSchema>
export type AnswerInput = Omit<SendThreadMessageInput, 'content' | 'compareWith'> & {
  principal: JobPrincipal
  userApiKey?: string
  /** The person's custom instructions: the system message when the chat has no prompt of its own. */
  instructions?: string
  /** What the assistant remembers about the person (their memory on), put after the system message. */
  memories?: string
  /**
   * Passages of the conversation's knowledge bases found for the question, to answer from: asked
   * with the question's text once it is known (a new question, an edited one, or the stored one an
   * answer is asked again for).
   */
  knowledgeFor?: (question: string) => Promise<string | undefined>
  /** The instructions of the person's groups, before the rest. */
  team?: string
}
type Dependencies = { jobs: BackgroundJobManager, threads: ThreadStore, config: ServerConfig }

/**
 * What every answer of a thread is asked with besides the question, as its owner is now (the same
 * for a message sent from the composer and one sent from the queue), and the language they read.
 */
export type ThreadAnswerContext = Pick<AnswerInput, 'instructions' | 'memories' | 'team' | 'knowledgeFor'> & { locale?: AppLocale }

/** The question an answer is for: one already stored (another answer), or new text (with files: new ones, or an edited question's) under a parent. */
type Question = { stored: ThreadMessage } | { content: string, parentId: string, files?: AcceptedAttachment[], keptFiles?: MessageAttachment[] }

/** The messages from the start of the conversation to `messageId`, oldest first. */
function branchTo(tree: MessageTree, threadId: string, messageId: string): ThreadMessage[] {
  return pathTo(tree, threadId, messageId).map(id => tree.byId.get(id)!)
}

/** The ids a send must use (a queued message's: fixed before anything is stored, so a send cut short is finished with them). */
interface FixedIds {
  questionId: string
  answerId: string
  jobId: string
}

/**
 * Sends a queued message (threads/message-queue.ts) after the last message of the branch on view,
 * with the ids it was given: what a send cut short by a crash stored (the question, its answer's
 * message) is used again, and a job already started is not started again (its id is taken).
 * Throws admission's refusals before anything new is stored.
 */
export async function sendWithIds(dependencies: Dependencies, thread: ChatThread, input: { content: string } & AnswerInput, ids: FixedIds): Promise<SentThreadMessage | { alreadyStarted: true }> {
  const all = await dependencies.threads.listMessages(thread.id)
  const question = all.find(message => message.id === ids.questionId)
  if (await dependencies.jobs.store.getJob(ids.jobId)) {
    // Started before a crash: its answer's message is told its job (idempotent).
    await dependencies.threads.updateMessage(ids.answerId, { jobId: ids.jobId })
    return { alreadyStarted: true }
  }
  if (question) {
    const tree = messageTree(thread.id, all)
    return answer(dependencies, thread, all, branchTo(tree, thread.id, tree.parentOf.get(question.id)!), { stored: question }, input, [input.model], ids)
  }
  const branch = threadPath(thread, all)
  return answer(dependencies, thread, all, branch, { content: input.content, parentId: branch.at(-1)?.id ?? thread.id }, input, [input.model], ids)
}

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
  // Files are checked before anything else happens: a refused one stores nothing.
  const files = acceptAttachments(input.attachments ?? [], dependencies.config.public.attachments)
  return answer(dependencies, thread, all, branch, { content: input.content, parentId: branch.at(-1)?.id ?? thread.id, files }, input, [input.model, ...input.compareWith ?? []])
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
  const history = (id: string) => branchTo(tree, thread.id, id)
  if (target.role === 'user') {
    if (input.content === undefined) throw new MessageVersionError('content: write the new text of the question.', 400)
    const parentId = tree.parentOf.get(target.id)!
    // The edited question keeps the files of the one it replaces.
    return answer(dependencies, thread, all, history(parentId), { content: input.content, parentId, keptFiles: target.attachments }, input)
  }
  if (input.content !== undefined) throw new MessageVersionError('content: an answer is not edited; leave content out to answer again.', 400)
  const question = tree.byId.get(tree.parentOf.get(target.id)!)
  if (question?.role !== 'user') throw new MessageVersionError('This answer has no question to answer again.', 400)
  return answer(dependencies, thread, all, history(tree.parentOf.get(question.id)!), { stored: question }, input)
}

/**
 * Stores the question (unless stored, with its new files) and an empty assistant message for each
 * model's answer (siblings: versions of one answer), the first made the branch on view.
 */
async function storeTurn(dependencies: Dependencies, thread: ChatThread, all: ThreadMessage[], before: ThreadMessage[], question: Question, newFiles: AcceptedAttachment[], models: string[], shape: ChatRequestShape, ids?: FixedIds) {
  const { threads } = dependencies
  const now = Date.now()
  let userMessage: ThreadMessage
  if ('stored' in question) {
    userMessage = question.stored
  } else {
    const attachments = [...(question.keptFiles ?? [])]
    for (const file of newFiles) {
      const attachment: MessageAttachment = { id: crypto.randomUUID(), ...file.attachment }
      await threads.addAttachment({ attachment, bytes: file.bytes, threadId: thread.id, userId: thread.userId, now })
      attachments.push(attachment)
    }
    userMessage = await threads.appendMessage({ ...(ids ? { id: ids.questionId } : {}), threadId: thread.id, parentId: question.parentId, role: 'user', content: question.content, now, ...(attachments.length ? { attachments } : {}) })
  }
  const messages = threadHistory(before, userMessage, shape.systemPrompt)
  if (all.length === 0 && thread.title === 'New chat') await threads.renameThread(thread.id, titleFromMessage(userMessage.content), now)
  const assistantMessages: ThreadMessage[] = []
  // Answers side by side carry the turn they share in their ids (versions.ts reads it back).
  const turn = crypto.randomUUID()
  for (const [index, model] of models.entries()) {
    const id = ids?.answerId ?? (models.length > 1 ? sideBySideAnswerId(turn, index) : crypto.randomUUID())
    // A send cut short after storing its answer's message goes on with that message.
    const stored = ids ? all.find(message => message.id === id) : undefined
    assistantMessages.push(stored ?? await threads.appendMessage({ id, threadId: thread.id, parentId: userMessage.id, role: 'assistant', content: '', model, status: 'streaming', now: now + 1 + index }))
  }
  await threads.setActiveMessage(thread.id, assistantMessages[0]!.id)
  return { userMessage, assistantMessages, messages }
}

/**
 * Stores the question (unless stored) and an assistant message for each of `models`' answers, and
 * starts each answer's job. Every model is admitted (caps with room for all of them, rate, budget)
 * before anything is stored, so a refusal stores nothing; a job that then fails to start marks its
 * message as failed (the first one's failure is thrown, the others' are returned with their message).
 */
async function answer(dependencies: Dependencies, thread: ChatThread, all: ThreadMessage[], before: ThreadMessage[], question: Question, input: AnswerInput, models: string[] = [input.model], ids?: FixedIds): Promise<SentThreadMessage> {
  const { jobs, threads, config } = dependencies
  checkMessageQuota(all.length, ('stored' in question ? 0 : 1) + models.length, config.limits)
  assertClientToolsFree(input.clientTools)
  const newFiles = 'stored' in question ? [] : question.files ?? []
  checkAttachmentQuota(newFiles.length ? await threads.attachmentBytes(thread.userId) : 0, newFiles.reduce((total, file) => total + file.bytes.length, 0), config.limits)
  const questionText = 'stored' in question ? question.stored.content : question.content
  const knowledge = questionText ? await input.knowledgeFor?.(questionText) : undefined
  const shape = chatRequestShape(thread.settings, { instructions: input.instructions, memories: input.memories, knowledge, team: input.team })
  const firstRequest = { messages: threadHistory(before, { content: questionText }, shape.systemPrompt), ...shape.fields }
  const admissions: Admission[] = []
  let stored: Awaited<ReturnType<typeof storeTurn>>
  try {
    for (const [index, model] of models.entries()) {
      admissions.push(await jobs.admit(input.principal, { models: [model], firstRequest, together: models.length - index }))
      resolveChatEndpoint(model, config, input.userApiKey)
    }
    stored = await storeTurn(dependencies, thread, all, before, question, newFiles, models, shape, ids)
  } catch (error) {
    // Nothing was started: the budget the starts reserved is free again.
    for (const admission of admissions) admission.budget.close()
    throw error
  }
  const { userMessage, assistantMessages, messages } = stored
  const answers: Array<{ assistantMessage: ThreadMessage, jobId?: string }> = []
  for (const [index, assistantMessage] of assistantMessages.entries()) {
    const model = models[index]!
    try {
      const job = await jobs.startChatJob({
        principal: input.principal,
        ...(ids ? { jobId: ids.jobId } : {}),
        threadId: thread.id,
        messageId: assistantMessage.id,
        userApiKey: input.userApiKey,
        request: { model, messages, fields: shape.fields, toolNames: input.tools, ...(input.clientTools?.length ? { clientTools: input.clientTools } : {}) },
      }, admissions[index])
      await threads.updateMessage(assistantMessage.id, { jobId: job.id })
      answers.push({ assistantMessage: { ...assistantMessage, jobId: job.id }, jobId: job.id })
    } catch (error) {
      const failed = { status: 'error' as const, error: { message: error instanceof Error ? error.message : 'The answer could not start.' } }
      await threads.updateMessage(assistantMessage.id, failed)
      if (index === 0) {
        for (const [later, other] of assistantMessages.entries()) {
          if (later === 0) continue
          admissions[later]!.budget.close()
          await threads.updateMessage(other.id, { status: 'error', error: { message: 'Not started: the first answer could not start.' } })
        }
        throw error
      }
      answers.push({ assistantMessage: { ...assistantMessage, ...failed } })
    }
  }
  const [first, ...alternatives] = answers
  return { userMessage, assistantMessage: first!.assistantMessage, jobId: first!.jobId!, ...(alternatives.length ? { alternatives } : {}) }
}
