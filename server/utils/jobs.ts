import type { H3Event } from 'h3'
import { modelRequestFields, type StreamRequest } from '../lib/agent/stream-request-schema'
import { jobPrincipal } from '../lib/http/job-principal'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { readStreamRequest } from '../lib/http/read-stream-request'
import { serveJobStream as serveJobEvents } from '../lib/http/serve-job-stream'
import { pageJobText, toJobSummary, toPublicJob } from '../lib/jobs/public-job'
import { currentServerRuntime } from '../lib/runtime/current'
import { withWaits } from '../lib/jobs/waits/summaries'
import type { BackgroundJob, JobStatus, JobSummary, PublicJob } from '../../shared/types/job'

/**
 * Starts a chat job for the session user from the body of `POST /api/openrouter/stream`: 413 when
 * too large, 400 naming what to fix, 403 for a model the user's role may not use, 429/503 over a
 * cap or rate, 402 with the daily budget used up, 400 when the model needs a key nobody gave,
 * 404 when `_threadId` is not one of the user's conversations.
 */
export async function startChatJobForRequest(event: H3Event): Promise<{ job: BackgroundJob, request: StreamRequest }> {
  // Who asks is known before the body is read: nothing of a stranger's body is parsed or checked.
  const user = await requireSessionUser(event)
  const request = await readStreamRequest(event)
  // The conversation a job names is one of this person's, checked where every route checks it.
  if (request._threadId !== undefined) await requireOwned(event, 'thread', request._threadId)
  if (request._background && !useServerConfig(event).backgroundJobs.enabled) {
    throw createError({ statusCode: 400, statusMessage: 'Background jobs are switched off on this server (NUXT_BACKGROUND_JOBS_ENABLED=false); send the request without _background to stream the answer.' })
  }
  try {
    const job = await useBackgroundJobs().startChatJob({
      principal: jobPrincipal(event, useServerConfig(event), user),
      threadId: request._threadId,
      messageId: request._messageId,
      userApiKey: userApiKeyOf(event),
      request: { model: request.model, messages: request.messages, fields: modelRequestFields(request), toolNames: request._tools, ...(request._clientTools?.length ? { clientTools: request._clientTools } : {}) },
    })
    return { job, request }
  } catch (error) {
    throwHttpError(event, error)
  }
}

/** Serves a job as server-sent events (snapshot or exact replay, live events, end); see lib/http/serve-job-stream. */
export function serveJobStream(event: H3Event, job: BackgroundJob, options: { abortOnClose?: boolean } = {}): Promise<void> {
  // useBackgroundJobs() answers 503 while the runtime is not installed, so it is there for the slots.
  return serveJobEvents(event, useBackgroundJobs(), job, { ...options, slots: currentServerRuntime()!.streams, address: event.context.clientAddress })
}

/**
 * One job as the API shows it: live text while it runs, otherwise the stored record without
 * secrets; text past `page.limit` characters (default 200,000) is left out, with a `textPage`.
 * What it asked its user comes with it.
 */
export async function viewJob(job: BackgroundJob, page: { offset?: number, limit?: number } = {}): Promise<PublicJob> {
  const manager = useBackgroundJobs()
  const live = manager.hub.snapshot(job.id)
  if (live) return pageJobText(live, page)
  const requests = await manager.inputs.ofJob(job.id)
  return pageJobText(requests.length > 0 ? { ...toPublicJob(job), inputRequests: requests } : toPublicJob(job), page)
}

/**
 * The user's jobs in short form, running ones first, each with what it waits on them for;
 * `status: 'waiting'` lists only the running jobs that wait for them.
 */
export async function listJobSummaries(userId: string, options: { limit?: number, status?: JobStatus | 'waiting' }): Promise<JobSummary[]> {
  const manager = useBackgroundJobs()
  const { status, ...rest } = options
  // Only running jobs wait: a list of ended ones needs no look at the open requests.
  const waiting = status === undefined || status === 'streaming' || status === 'waiting' ? await manager.inputs.openFor(userId) : []
  const jobs = await manager.store.listJobs({ userId, ...rest, status: status === 'waiting' ? 'streaming' : status })
  return jobs
    .map(job => withWaits(toJobSummary(job), waiting))
    .filter(summary => status !== 'waiting' || summary.waitingFor !== undefined)
}
