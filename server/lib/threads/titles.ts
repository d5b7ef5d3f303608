/**
 * Thread titles: the first message's words at once, then, after the first answer, a short title
 * the answering model writes (one small request through the same client, after the answer has
 * ended, so it never delays it). A title the person gave is never replaced. The request counts
 * against the person's daily budget like their answers, and is not made once that is used up.
 */
import type { ServerConfig } from '../config/server-config'
import { chatClientOptions } from '../models/chat-endpoint'
import { streamChatCompletion, type ChatEndpoint } from '../openrouter/chat-client'
import type { Allowance, SpentBudget } from '../jobs/admission/budget'
import { RequestSpend } from '../jobs/admission/budget-pool'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { BackgroundJob } from '../../../shared/types/job'
import { MAX_THREAD_TITLE } from '../../../shared/limits'
import { messageTree } from './versions'

/** A title from the first words of a message. */
export function titleFromMessage(content: string): string {
  const flat = content.replace(/\s+/g, ' ').trim()
  if (!flat) return 'New chat'
  return flat.length > 60 ? `${flat.slice(0, 59).replace(/\s+\S*$/, '')}…` : flat
}

/** What the title request shows the model of the conversation: the start of the question and of the answer. */
const EXCERPT_CHARS = 1_500
/** The longest a generated title may be (characters; longer ones are cut at a word). */
const GENERATED_TITLE_CHARS = 60
/** How long the title request may take before it is given up (the first message's words stay). */
const TITLE_TIMEOUT_MS = 20_000

export const TITLE_INSTRUCTIONS = 'Write a short title (2 to 6 words) for this conversation, in the language of the question. Reply with the title only: no quotes, no punctuation at the end.'

/** The model's reply made into a title: one line, without "Title:", quotes or Markdown marks around it, at most 60 characters; undefined when nothing is left. */
export function cleanTitle(reply: string): string | undefined {
  let title = reply.trim().split('\n').find(line => line.trim())?.trim() ?? ''
  // Quotes, Markdown marks and end punctuation around the title go; marks inside it ("6*7") stay.
  title = title.replace(/^[\s#*_`]*title\s*:\s*/i, '').replace(/^["'“”‘’«»*_`#\s]+|["'“”‘’«»*_`.:;,\s]+$/g, '').replace(/\s+/g, ' ').trim()
  if (!title || !/[\p{L}\p{N}]/u.test(title)) return undefined
  if (title.length > GENERATED_TITLE_CHARS) title = `${title.slice(0, GENERATED_TITLE_CHARS - 1).replace(/\s+\S*$/, '')}…`
  return title.slice(0, MAX_THREAD_TITLE)
}

/** The person's daily budget, for a model request made outside a job: what is left, and where to count what it used. */
export interface TitleBudget {
  allowance(userId: string): Promise<Allowance>
  record(userId: string, spent: SpentBudget): Promise<void>
}

/**
 * Asks `endpoint`'s `model` for a title of a conversation that began with `question` and
 * `answer`: the title (undefined when it gives none in time) and what the request used (the
 * usage the provider reports, else an estimate from the text).
 */
/** What a title request used, as that model's share. */
function withModel(meter: RequestSpend): SpentBudget {
  const spent = meter.spent()
  return { ...spent, byModel: [{ model: meter.model, ...spent }] }
}

export async function requestTitle(endpoint: ChatEndpoint, config: ServerConfig, model: string, question: string, answer: string, signal?: AbortSignal): Promise<{ title?: string, spent: SpentBudget }> {
  const request = {
    model,
    stream: true as const,
    max_tokens: 48,
    messages: [
      { role: 'system' as const, content: TITLE_INSTRUCTIONS },
      { role: 'user' as const, content: `Question: ${question.slice(0, EXCERPT_CHARS)}\n\nAnswer: ${answer.slice(0, EXCERPT_CHARS)}` },
    ],
  }
  const timeout = AbortSignal.timeout(TITLE_TIMEOUT_MS)
  let reply = ''
  const meter = new RequestSpend(0, model)
  for await (const event of streamChatCompletion(endpoint, request, { ...chatClientOptions(config), signal: signal ? AbortSignal.any([signal, timeout]) : timeout })) {
    if (event.type === 'text-delta') {
      reply += event.text
      meter.addText(event.text.length)
    }
    if (event.type === 'usage') meter.addUsage(event.usage)
    if (event.type === 'error') return { spent: withModel(meter) }
    if (reply.length > 1_000) break
  }
  return { title: cleanTitle(reply), spent: withModel(meter) }
}

/**
 * After `job`, a chat job that answered the first question of its thread, gives the thread a
 * generated title, when the thread still has the title taken from that question (the person has
 * not renamed it). Returns the new title, or undefined when it left the title alone.
 */
export async function titleAfterFirstAnswer(
  dependencies: { threads: ThreadStore, config: ServerConfig, budget?: TitleBudget },
  job: BackgroundJob,
  endpoint: ChatEndpoint,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { threads, config, budget } = dependencies
  if (!config.threads.generateTitles || job.type !== 'chat' || job.status !== 'complete' || !job.threadId || !job.content.trim()) return undefined
  const thread = await threads.getThread(job.threadId)
  if (!thread || thread.userId !== job.userId) return undefined
  const tree = messageTree(thread.id, await threads.listMessages(thread.id))
  const answer = tree.byId.get(job.messageId)
  const question = answer && tree.byId.get(tree.parentOf.get(answer.id)!)
  // Only the answer to a first question, in a thread whose title is still that question's words.
  if (answer?.jobId !== job.id || question?.role !== 'user' || tree.parentOf.get(question.id) !== thread.id) return undefined
  const automatic = titleFromMessage(question.content)
  if (thread.title !== automatic) return undefined
  // The files' names say what a question about files is about ("What is this?").
  const files = question.attachments?.length ? `\n(Attached: ${question.attachments.map(file => file.name).join(', ')})` : ''
  // A person whose daily budget is used up keeps the first words rather than spend past it.
  if (budget) {
    const left = await budget.allowance(job.userId)
    if (left.tokens <= 0 || left.cost <= 0) return undefined
  }
  const { title, spent } = await requestTitle(endpoint, config, job.model, `${question.content}${files}`, job.content, signal)
  await budget?.record(job.userId, spent)
  if (!title || title === automatic || signal?.aborted) return undefined
  // The person may have renamed it while the model wrote.
  const now = await threads.getThread(thread.id)
  if (now?.title !== automatic) return undefined
  await threads.renameThread(thread.id, title, now.updatedAt)
  return title
}

/**
 * Titles written after first answers, in the background: `after` starts one and returns at once;
 * `close` stops those under way (at shutdown, before the stores close) and waits for them.
 */
export class ThreadTitles {
  private readonly pending = new Set<Promise<unknown>>()
  private readonly stopped = new AbortController()

  constructor(private readonly dependencies: { threads: ThreadStore, config: ServerConfig, budget?: TitleBudget, logger?: { warn: (message: string, error?: unknown) => void } }) {}

  /** Titles `job`'s thread if it answered its first question (see `titleAfterFirstAnswer`); never throws. */
  after(job: BackgroundJob, endpoint: ChatEndpoint): void {
    if (this.stopped.signal.aborted) return
    const task = titleAfterFirstAnswer(this.dependencies, job, endpoint, this.stopped.signal)
      .catch(error => this.dependencies.logger?.warn(`The title for thread ${job.threadId} could not be written`, error))
      .finally(() => this.pending.delete(task))
    this.pending.add(task)
  }

  async close(): Promise<void> {
    this.stopped.abort()
    await Promise.allSettled([...this.pending])
  }
}
