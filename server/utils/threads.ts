import type { H3Event } from 'h3'
import { jobPrincipal } from '../lib/http/job-principal'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { readJsonBody as readBoundedJsonBody } from '../lib/http/read-json-body'
import { sendThreadMessage as sendMessage, threadMessageSchema } from '../lib/threads/send-message'
import type { ChatThread, SentThreadMessage } from '../../shared/types/thread'

/**
 * Stores the user's message (the request's body: content, model, tools, browser tools) and starts
 * the answer as a background job; refused before anything is stored: 400 naming what to fix, 403
 * for a model the role may not use, 429/503 over a cap or rate, 402 with the daily budget used up.
 */
export async function sendThreadMessage(event: H3Event, thread: ChatThread): Promise<SentThreadMessage> {
  const input = await readBoundedJsonBody(event, threadMessageSchema)
  const user = await requireSessionUser(event)
  try {
    const principal = jobPrincipal(event, useServerConfig(event), user, thread.userId)
    return await sendMessage({ jobs: useBackgroundJobs(), threads: useThreadStore(), config: useServerConfig(event) }, thread, { ...input, principal, userApiKey: userApiKeyOf(event) })
  } catch (error) {
    throwHttpError(event, error)
  }
}

/** Deletes a conversation, stopping any answer still running in it. */
export async function deleteThread(thread: ChatThread): Promise<void> {
  const threads = useThreadStore()
  const running = (await threads.listMessages(thread.id)).filter(message => message.status === 'streaming' && message.jobId)
  await Promise.all(running.map(message => useBackgroundJobs().abortJob(message.jobId!)))
  await threads.deleteThread(thread.id)
}
