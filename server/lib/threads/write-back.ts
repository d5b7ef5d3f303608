/**
 * When an answer's job ends, its text, tool calls and outcome go into the assistant message that
 * was created for it. A job names its thread and message itself (`_threadId` / `_messageId` on
 * `POST /api/openrouter/stream` are the caller's labels), so the message is written only when it
 * is the job's own: a thread of the job's user, an assistant message of that thread, made for this
 * job. Anything else (another user's ids, a finished answer) is left untouched.
 */
import type { ThreadStore } from '../stores/threads/thread-store'
import type { BackgroundJob } from '../../../shared/types/job'
import type { ThreadMessageUpdate } from '../stores/threads/thread-store'
import type { MessageAttachment } from '../../../shared/types/attachment'
import { GENERATE_IMAGE_TOOL, generatedImagesOf } from '../../../shared/images'

/** The images a job's `generate_image` calls kept in its conversation, as the answer's files. */
export function imagesMadeBy(job: BackgroundJob): MessageAttachment[] {
  return job.toolRounds.flatMap(round => round.toolCalls)
    .filter(call => call.name === GENERATE_IMAGE_TOOL && !call.error)
    .flatMap(call => generatedImagesOf(call.result).images)
}

/** What an ended job writes into its assistant message. */
export function messageUpdateFromJob(job: BackgroundJob): ThreadMessageUpdate {
  const images = imagesMadeBy(job)
  return {
    status: job.status,
    content: job.content,
    reasoning: job.reasoning || undefined,
    toolCalls: job.activeToolCalls,
    error: job.error,
    finishReason: job.finishReason,
    ...(job.usage ? { usage: job.usage } : {}),
    ...(job.steers?.length ? { steers: job.steers } : {}),
    ...(images.length ? { attachments: images } : {}),
    jobId: job.id,
  }
}

/** Writes `job`'s outcome into its assistant message when that message is the job's own; returns whether it did. */
export async function writeJobIntoThread(threads: ThreadStore, job: BackgroundJob): Promise<boolean> {
  const message = await threads.getMessage(job.messageId)
  if (!message || message.threadId !== job.threadId || message.role !== 'assistant') return false
  if (message.jobId !== undefined && message.jobId !== job.id) return false
  const thread = await threads.getThread(message.threadId)
  if (!thread || thread.userId !== job.userId) return false
  return threads.updateMessage(message.id, messageUpdateFromJob(job))
}
