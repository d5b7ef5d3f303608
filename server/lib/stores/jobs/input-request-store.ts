/**
 * The input-request part of every job store (memory, sqlite, Convex): what jobs wait on their
 * users for (see shared/types/input-request.ts). Each change is a compare-and-set on the stored
 * request, so two tabs, two devices or two server instances can never both claim a browser tool
 * call or both answer one request: exactly one wins, the other is told what happened instead.
 * Requests go with their job (retention sweep, account deletion).
 */
import type { InputAnswer, JobInputRequest } from '../../../../shared/types/input-request'

/** A request as the waiting run opens it (id, status and times are the store's). */
export type NewInputRequest = Omit<JobInputRequest, 'id' | 'status' | 'createdAt' | 'claimedBy' | 'claimedAt' | 'answeredAt' | 'answer' | 'consumedAt'> & { id?: string, now?: number }

/** How a change went: `ok` with the stored request, or why not with the request as it stands. */
export type InputRequestChange =
  | { ok: true, request: JobInputRequest }
  | { ok: false, reason: 'missing' } | { ok: false, reason: 'settled' | 'claimed', request: JobInputRequest }

/** What the store does with input requests. */
export interface InputRequestStore {
  /**
   * Opens a request, or returns the one already stored under the same job and `key` (a resumed
   * run asking again gets the request, and any answer, it had before the restart).
   */
  openInputRequest(input: NewInputRequest): Promise<JobInputRequest>
  getInputRequest(jobId: string, requestId: string): Promise<JobInputRequest | null>
  /** A job's requests (oldest first) or a user's open ones (newest first); at most 200. */
  listInputRequests(query: { jobId: string } | { userId: string, status: 'open' }): Promise<JobInputRequest[]>
  /**
   * Takes an open request for `claimant` when nobody holds it, or the holder's claim is older
   * than `claimMs` (that tab went away). `claimed` when another holds it; `settled` when done.
   */
  claimInputRequest(jobId: string, requestId: string, claimant: string, options: { claimMs: number, now?: number }): Promise<InputRequestChange>
  /**
   * Answers an open request (first answer wins; `settled` for a later one). A browser tool call is
   * answered only by the tab that holds its claim (`claimed` for another), or by any tab while
   * nobody holds a live claim (answering then takes it).
   */
  answerInputRequest(jobId: string, requestId: string, answer: InputAnswer, options?: AnswerOptions): Promise<InputRequestChange>
  /** Ends an open request without an answer (`expired` past its time, `cancelled` with its job). */
  closeInputRequest(jobId: string, requestId: string, status: 'expired' | 'cancelled', now?: number): Promise<InputRequestChange>
  /** Marks an answered request acted on; false when it already was (the action must not run again). */
  consumeInputRequest(jobId: string, requestId: string, now?: number): Promise<boolean>
}

/** Who answers, and when. */
export interface AnswerOptions {
  /** The tab that sends a browser tool's result (see `claimInputRequest`). */
  claimant?: string
  /** How long a claim holds without a result (`waits.claimMs`). */
  claimMs?: number
  now?: number
}

/** Whether `claimant` may settle `request` now: it holds the claim, or nobody holds a live one. */
function holdsClaim(request: JobInputRequest, claimant: string | undefined, claimMs: number, now: number): boolean {
  if (request.kind !== 'client-tool' || !request.claimedBy || request.claimedBy === claimant) return true
  // Another tab's claim: it is theirs while it lives; lapsed, anyone may take it (as a claim would).
  return request.claimedAt !== undefined && now - request.claimedAt >= claimMs
}

/** Most requests one list returns. */
export const INPUT_REQUEST_LIST_LIMIT = 200

/** Builds the stored form of a new request. */
export function newInputRequest(input: NewInputRequest, id: string): JobInputRequest {
  const { now, id: _id, ...fields } = input
  return { ...fields, id, status: 'open', createdAt: now ?? Date.now() }
}

/** The compare-and-set rules every store applies, on a request read inside its transaction. */
export const inputRequestRules = {
  claim(request: JobInputRequest, claimant: string, claimMs: number, now: number): InputRequestChange {
    if (request.status !== 'open') return { ok: false, reason: 'settled', request }
    if (request.claimedBy && request.claimedBy !== claimant && request.claimedAt !== undefined && now - request.claimedAt < claimMs) return { ok: false, reason: 'claimed', request }
    return { ok: true, request: { ...request, claimedBy: claimant, claimedAt: now } }
  },
  answer(request: JobInputRequest, answer: InputAnswer, options: AnswerOptions & { now: number }): InputRequestChange {
    if (request.status !== 'open') return { ok: false, reason: 'settled', request }
    if (!holdsClaim(request, options.claimant, options.claimMs ?? 0, options.now)) return { ok: false, reason: 'claimed', request }
    const claim = request.kind === 'client-tool' && options.claimant ? { claimedBy: options.claimant, claimedAt: request.claimedBy === options.claimant ? request.claimedAt : options.now } : {}
    return { ok: true, request: { ...request, ...claim, status: 'answered', answer, answeredAt: options.now } }
  },
  close(request: JobInputRequest, status: 'expired' | 'cancelled', now: number): InputRequestChange {
    if (request.status !== 'open') return { ok: false, reason: 'settled', request }
    return { ok: true, request: { ...request, status, answeredAt: now } }
  },
  consume(request: JobInputRequest, now: number): JobInputRequest | undefined {
    if (request.status !== 'answered' || request.consumedAt !== undefined) return undefined
    return { ...request, consumedAt: now }
  },
}
