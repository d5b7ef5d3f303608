/**
 * The compare-and-set rules of a job's input requests (what a job waits on its person for), applied
 * by every store (memory, sqlite, and the Convex functions) to a request read inside its own
 * transaction: two tabs, devices or instances can never both claim a browser tool call or both
 * answer one request. Here in shared/ because the Convex deployment runs them too.
 */
import type { InputAnswer, JobInputRequest } from './types/input-request'

/** How a change went: `ok` with the stored request, or why not with the request as it stands. */
export type InputRequestChange =
  | { ok: true, request: JobInputRequest }
  | { ok: false, reason: 'missing' } | { ok: false, reason: 'settled' | 'claimed', request: JobInputRequest }

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
