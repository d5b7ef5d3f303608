/**
 * Jobs that wait for a person. A run asks (`ask`): the request is stored (once per job and key, so
 * a run resumed after a restart finds it again), shown to viewers as an `input-request` event, and
 * noted for its owner; the run then waits until the request is answered, expires or the job stops.
 * An answer (`answer`, from any tab, device or instance) is a compare-and-set in the store and wakes
 * a waiter in this process at once; a waiter whose answer came through another instance sees it at
 * its next poll of the store. Only the job's owner may answer or claim; the first answer wins.
 */
import type { InputClaim, JobInputRequest } from '../../../../shared/types/input-request'
import type { BackgroundJob } from '../../../../shared/types/job'
import type { JobStore } from '../../stores/jobs/job-store'
import type { NewInputRequest } from '../../stores/jobs/input-request-store'
import type { JobLiveHub } from '../live-hub'
import { UNOBSERVED, type JobObserver } from '../job-observer'
import { parseInputAnswer } from './answers'
import { DomainError, type HttpAnswer } from '../../domain-error'
import { localize } from '../../i18n/server-text'

/** How long waits last and how often a waiter looks at the store. */
export interface WaitSettings {
  /** An open request expires after this long; the job goes on without an answer. */
  timeoutMs: number
  /** Longest one job may wait for people in all (its requests' open times added up). */
  maxTotalMs?: number
  /** A tab's claim of a browser tool call lapses after this long without a result (another may take it). */
  claimMs: number
  /** How often a waiting run reads its request from the store (answers given on another instance). */
  pollMs: number
}

/** A refused answer or claim: 400 (does not fit), 404 (not yours or none), 409 (already settled or claimed), 410 (expired). */
export class JobInputError extends DomainError {
  override readonly name = 'JobInputError'
  constructor(readonly statusCode: 400 | 404 | 409 | 410, message: string, readonly request?: JobInputRequest) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const statusMessages = { 400: 'Answer does not fit', 404: 'No such request', 409: 'Already settled', 410: 'Request expired' }
    return { statusCode: this.statusCode, statusMessage: statusMessages[this.statusCode], message: this.message, data: this.request ? { request: this.request } : undefined }
  }

  static isInstance(error: unknown): error is JobInputError {
    return error instanceof Error && error.name === 'JobInputError'
  }
}

/** What a run asks: everything but what the store and the settings decide. */
export type InputQuestion = Omit<NewInputRequest, 'expiresAt' | 'now' | 'id'>

/** Why a waiting run was stopped without its request being ended (it resumes and waits again). */
const RESUMABLE_STOPS = new Set(['shutdown', 'lease-lost'])

/** The tab a browser tool's result comes from (`claimant` of the answer's body). */
function claimantOf(body: unknown): string | undefined {
  const claimant = (body as { claimant?: unknown } | null)?.claimant
  return typeof claimant === 'string' && claimant.length <= 100 ? claimant : undefined
}

function describeSettled(request: JobInputRequest): JobInputError {
  if (request.status === 'expired') return new JobInputError(410, 'This request expired before it was answered; the job went on without an answer.', request)
  if (request.status === 'cancelled') return new JobInputError(410, 'The job has ended, so this request is closed; nothing waits for its answer any more.', request)
  const answer = request.answer
  const what = answer?.kind === 'approval' ? (answer.approved ? 'approved' : 'denied') : answer?.kind === 'question' ? `answered (${answer.action})` : 'answered'
  return new JobInputError(409, `This request was already ${what}${request.answeredAt ? ` at ${new Date(request.answeredAt).toISOString()}` : ''}; the first answer counts.`, request)
}

/** Where a waiting job gives up its running slot and, answered, takes one again (admission/caps.ts). */
export interface JobParking {
  park(jobId: string): boolean
  unpark(jobId: string, signal?: AbortSignal): Promise<void>
}

/** The waits of one server process. */
export class JobInputs {
  private readonly wakers = new Map<string, Set<() => void>>()
  /** Waits under way per job, and whether the job gave up its slot for them. */
  private readonly waitsOf = new Map<string, { count: number, parked: boolean }>()

  private readonly observer: JobObserver

  constructor(private readonly options: {
    store: JobStore
    hub: JobLiveHub
    settings: WaitSettings
    parking?: JobParking
    /** With several instances: hears of an answer given on another one sooner than the next poll. */
    settledElsewhere?: (jobId: string, requestId: string, onSettled: () => void) => () => void
    observer?: JobObserver
    logger?: { warn: (message: string, ...details: unknown[]) => void }
  }) {
    this.observer = options.observer ?? UNOBSERVED
  }

  get settings(): WaitSettings {
    return this.options.settings
  }

  /**
   * Opens (or finds again) the request and waits until it is settled, at most `timeoutMs` (never
   * longer than the configured wait). `aborted` when `signal`
   * stopped the wait: on shutdown or a lost lease the request stays open for the resumed run;
   * otherwise (the job was stopped) it is cancelled.
   */
  async ask(question: InputQuestion, signal?: AbortSignal, timeoutMs = this.settings.timeoutMs): Promise<{ request: JobInputRequest } | { aborted: true }> {
    const { store } = this.options
    const now = Date.now()
    const allowed = Math.min(timeoutMs, this.settings.timeoutMs, await this.waitLeft(question.jobId, now))
    const request = await store.inputRequests.open({ ...question, expiresAt: now + Math.max(1_000, allowed), now })
    this.publish(request)
    if (request.createdAt === now && request.status === 'open') {
      this.observer.waitOpened(request.kind)
      await this.noteForOwner(request)
    }
    if (request.status !== 'open') return { request }
    this.startWaiting(request.jobId)
    try {
      const waited = await this.waitFor(request, signal)
      if ('request' in waited && waited.request.status !== 'open') this.observer.waitEnded(request.kind, waited.request.status)
      return waited
    } finally {
      await this.stopWaiting(request.jobId, signal)
    }
  }

  /** Waits until `request` is settled (answered here or elsewhere, or expired), or `signal` stops it. */
  private async waitFor(open: JobInputRequest, signal?: AbortSignal): Promise<{ request: JobInputRequest } | { aborted: true }> {
    const stopWatching = this.options.settledElsewhere?.(open.jobId, open.id, () => this.wake(open.id))
    try {
      return await this.waitUntilSettled(open, signal)
    } finally {
      stopWatching?.()
    }
  }

  private async waitUntilSettled(open: JobInputRequest, signal?: AbortSignal): Promise<{ request: JobInputRequest } | { aborted: true }> {
    const { store } = this.options
    let request = open
    while (request.status === 'open') {
      if (signal?.aborted) return this.stopped(request, signal)
      const left = request.expiresAt - Date.now()
      if (left <= 0) {
        const closed = await store.inputRequests.close(request.jobId, request.id, 'expired')
        request = 'request' in closed ? closed.request : request
        if (closed.ok) this.publish(request)
        break
      }
      await this.sleep(request.id, Math.min(this.settings.pollMs, left), signal)
      const latest = await store.inputRequests.get(request.jobId, request.id)
      if (!latest) break
      if (latest.status !== request.status || latest.claimedBy !== request.claimedBy) this.publish(latest)
      request = latest
    }
    return { request }
  }

  /** What is left of the job's total waiting time (`maxTotalMs`), counting every request it made. */
  private async waitLeft(jobId: string, now: number): Promise<number> {
    const { maxTotalMs } = this.settings
    if (maxTotalMs === undefined) return Infinity
    const asked = await this.options.store.inputRequests.list({ jobId }).catch(() => [])
    const waited = asked.reduce((sum, request) => sum + Math.max(0, (request.status === 'open' ? now : request.answeredAt ?? now) - request.createdAt), 0)
    return maxTotalMs - waited
  }

  /** A wait begins: the job's first gives up its running slot (when the waiting caps allow). */
  private startWaiting(jobId: string): void {
    const waits = this.waitsOf.get(jobId) ?? { count: 0, parked: false }
    if (waits.count++ === 0) waits.parked = this.options.parking?.park(jobId) ?? false
    this.waitsOf.set(jobId, waits)
  }

  /** A wait ended: after the job's last, it takes a running slot again (queued in order when none is free). */
  private async stopWaiting(jobId: string, signal?: AbortSignal): Promise<void> {
    const waits = this.waitsOf.get(jobId)
    if (!waits || --waits.count > 0) return
    this.waitsOf.delete(jobId)
    if (waits.parked) await this.options.parking?.unpark(jobId, signal)
  }

  /**
   * Records the owner's answer to a request of `job`; refused with a JobInputError. A browser
   * tool's result counts only from the tab that holds its claim (`claimant` in the body); a request
   * of a job that has ended is closed and refused with 410.
   */
  async answer(job: Pick<BackgroundJob, 'id' | 'userId' | 'status'>, requestId: string, body: unknown): Promise<JobInputRequest> {
    const request = await this.openRequestOf(job.userId, job.id, requestId)
    if (job.status !== 'streaming') {
      await this.closeAllOf(job.id)
      throw new JobInputError(410, `The job has ended (${job.status}), so this request is closed; nothing waits for its answer any more.`, request)
    }
    let answer
    try {
      answer = parseInputAnswer(request, body)
    } catch (error) {
      throw new JobInputError(400, (error as Error).message, request)
    }
    const result = await this.options.store.inputRequests.answer(job.id, requestId, answer, { claimant: claimantOf(body), claimMs: this.settings.claimMs })
    if (!result.ok) {
      if (result.reason === 'missing') throw new JobInputError(404, 'No such request for this job.')
      if (result.reason === 'claimed') throw new JobInputError(409, 'Another tab is running this browser tool call, and only its result counts. Leave it to that tab.', result.request)
      throw describeSettled(result.request)
    }
    this.publish(result.request)
    this.wake(requestId)
    return result.request
  }

  /**
   * Closes every open request of `jobId` (its job has ended, any way): viewers and listings drop
   * them at once, and a late answer gets 410. Safe to call more than once.
   */
  async closeAllOf(jobId: string): Promise<void> {
    const open = (await this.options.store.inputRequests.list({ jobId })).filter(request => request.status === 'open')
    for (const request of open) {
      const closed = await this.options.store.inputRequests.close(jobId, request.id, 'cancelled')
      if (closed.ok) this.publish(closed.request)
      this.wake(request.id)
    }
  }

  /** Takes a browser tool call for tab `claimant`, so no other tab runs it; `claimed: false` when another tab holds it. */
  async claim(userId: string, jobId: string, requestId: string, claimant: string): Promise<InputClaim> {
    const request = await this.openRequestOf(userId, jobId, requestId)
    if (request.kind !== 'client-tool') throw new JobInputError(400, 'Only a browser tool call is claimed; answer approvals and questions directly.', request)
    const result = await this.options.store.inputRequests.claim(jobId, requestId, claimant, { claimMs: this.settings.claimMs })
    if (result.ok) {
      this.publish(result.request)
      return { claimed: true, request: result.request }
    }
    if (result.reason === 'missing') throw new JobInputError(404, 'No such request for this job.')
    if (result.reason === 'settled') throw describeSettled(result.request)
    return { claimed: false, request: result.request }
  }

  /** A job's requests (for its page and a resumed run). */
  ofJob(jobId: string): Promise<JobInputRequest[]> {
    return this.options.store.inputRequests.list({ jobId })
  }

  /**
   * What `userId`'s jobs wait on them for now, newest first. A request whose job has ended is left
   * out (and closed) even if the ending did not get to close it (a crash in between).
   */
  async openFor(userId: string): Promise<JobInputRequest[]> {
    const now = Date.now()
    const open = (await this.options.store.inputRequests.list({ userId, status: 'open' })).filter(request => request.expiresAt > now)
    const ended = new Set<string>()
    await Promise.all([...new Set(open.map(request => request.jobId))].map(async (jobId) => {
      const job = await this.options.store.getJob(jobId)
      if (job?.status === 'streaming') return
      ended.add(jobId)
      await this.closeAllOf(jobId).catch(error => this.options.logger?.warn(`Job ${jobId}: its open requests could not be closed`, error))
    }))
    return open.filter(request => !ended.has(request.jobId))
  }

  /** Marks an approval acted on; false when it already was (a restart must not run the tool twice). */
  consume(request: JobInputRequest): Promise<boolean> {
    return this.options.store.inputRequests.consume(request.jobId, request.id)
  }

  private async openRequestOf(userId: string, jobId: string, requestId: string): Promise<JobInputRequest> {
    const request = await this.options.store.inputRequests.get(jobId, requestId)
    if (!request || request.userId !== userId) throw new JobInputError(404, 'No such request for this job.')
    if (request.status !== 'open') throw describeSettled(request)
    if (request.expiresAt <= Date.now()) {
      const closed = await this.options.store.inputRequests.close(jobId, requestId, 'expired')
      if ('request' in closed) {
        this.publish(closed.request)
        this.wake(requestId)
        throw describeSettled(closed.request)
      }
      throw new JobInputError(410, 'This request expired before it was answered.')
    }
    return request
  }

  private async stopped(request: JobInputRequest, signal: AbortSignal): Promise<{ aborted: true }> {
    if (!RESUMABLE_STOPS.has(String(signal.reason))) {
      const closed = await this.options.store.inputRequests.close(request.jobId, request.id, 'cancelled').catch(() => undefined)
      if (closed?.ok) {
        this.publish(closed.request)
        this.observer.waitEnded(request.kind, 'cancelled')
      }
    }
    return { aborted: true }
  }

  private publish(request: JobInputRequest): void {
    this.options.hub.updateInputRequest(request.jobId, request)
  }

  private async noteForOwner(request: JobInputRequest): Promise<void> {
    const job = await this.options.store.getJob(request.jobId).catch(() => null)
    if (!job) return
    await this.options.store.notifications.add({ userId: request.userId, jobId: request.jobId, threadId: job.threadId, kind: 'input-needed', title: localize(job.request?.locale ?? 'en', { key: 'notes.waitsForYou' }), body: request.title })
      .catch(error => this.options.logger?.warn(`Job ${request.jobId}: the note about its request could not be stored`, error))
  }

  private sleep(requestId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wakers = this.wakers.get(requestId) ?? new Set()
      this.wakers.set(requestId, wakers)
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        wakers.delete(done)
        if (wakers.size === 0) this.wakers.delete(requestId)
        resolve()
      }
      const timer = setTimeout(done, ms)
      wakers.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  private wake(requestId: string): void {
    for (const wake of [...this.wakers.get(requestId) ?? []]) wake()
  }
}
