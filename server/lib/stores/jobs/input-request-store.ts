/**
 * The input-request part of every job store (memory, sqlite, Convex): what jobs wait on their
 * users for (see shared/types/input-request.ts). Each change is a compare-and-set on the stored
 * request, so two tabs, two devices or two server instances can never both claim a browser tool
 * call or both answer one request: exactly one wins, the other is told what happened instead.
 * Requests go with their job (retention sweep, account deletion).
 */
import type { InputAnswer, JobInputRequest } from '../../../../shared/types/input-request'
import type { AnswerOptions, InputRequestChange } from '../../../../shared/input-request-rules'

/** A request as the waiting run opens it (id, status and times are the store's). */
export type NewInputRequest = Omit<JobInputRequest, 'id' | 'status' | 'createdAt' | 'claimedBy' | 'claimedAt' | 'answeredAt' | 'answer' | 'consumedAt'> & { id?: string, now?: number }

/** What the store does with input requests. */
export interface InputRequestStore {
  /**
   * Opens a request, or returns the one already stored under the same job and `key` (a resumed
   * run asking again gets the request, and any answer, it had before the restart).
   */
  open(input: NewInputRequest): Promise<JobInputRequest>
  get(jobId: string, requestId: string): Promise<JobInputRequest | null>
  /** A job's requests (oldest first) or a user's open ones (newest first); at most 200. */
  list(query: { jobId: string } | { userId: string, status: 'open' }): Promise<JobInputRequest[]>
  /**
   * Takes an open request for `claimant` when nobody holds it, or the holder's claim is older
   * than `claimMs` (that tab went away). `claimed` when another holds it; `settled` when done.
   */
  claim(jobId: string, requestId: string, claimant: string, options: { claimMs: number, now?: number }): Promise<InputRequestChange>
  /**
   * Answers an open request (first answer wins; `settled` for a later one). A browser tool call is
   * answered only by the tab that holds its claim (`claimed` for another), or by any tab while
   * nobody holds a live claim (answering then takes it).
   */
  answer(jobId: string, requestId: string, answer: InputAnswer, options?: AnswerOptions): Promise<InputRequestChange>
  /** Ends an open request without an answer (`expired` past its time, `cancelled` with its job). */
  close(jobId: string, requestId: string, status: 'expired' | 'cancelled', now?: number): Promise<InputRequestChange>
  /** Marks an answered request acted on; false when it already was (the action must not run again). */
  consume(jobId: string, requestId: string, now?: number): Promise<boolean>
}

/** Builds the stored form of a new request. */
export function newInputRequest(input: NewInputRequest, id: string): JobInputRequest {
  const { now, id: _id, ...fields } = input
  return { ...fields, id, status: 'open', createdAt: now ?? Date.now() }
}
