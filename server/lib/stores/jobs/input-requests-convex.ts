/** The input requests of the Convex job store (convex/inputRequests.ts; rules in input-request-store.ts). */
import type { FunctionReturnType } from 'convex/server'
import { api } from '../../../../convex/_generated/api'
import type { JobInputRequest } from '../../../../shared/types/input-request'
import { newInputRequest, type InputRequestStore } from './input-request-store'
import type { InputRequestChange } from '../../../../shared/input-request-rules'
import type { ConvexFunctionClient } from './convex'

type ConvexChange = FunctionReturnType<typeof api.inputRequests.answer>

function parse(body: string): JobInputRequest {
  return JSON.parse(body) as JobInputRequest
}

function toChange(result: ConvexChange): InputRequestChange {
  if (result.ok) return { ok: true, request: parse(result.body!) }
  if (result.reason === 'settled' || result.reason === 'claimed') return { ok: false, reason: result.reason, request: parse(result.body!) }
  return { ok: false, reason: 'missing' }
}

/** The input-request methods over a Convex deployment. */
export function createConvexInputRequests(client: ConvexFunctionClient, secret: string): InputRequestStore {
  return {
    async open(input) {
      const request = newInputRequest(input, input.id ?? crypto.randomUUID())
      return parse(await client.mutation(api.inputRequests.open, { secret, body: JSON.stringify(request) }))
    },
    async get(jobId, requestId) {
      const body = await client.query(api.inputRequests.get, { secret, jobId, requestId })
      return body === null ? null : parse(body)
    },
    async list(query) {
      const bodies = await client.query(api.inputRequests.list, 'jobId' in query ? { secret, jobId: query.jobId } : { secret, userId: query.userId })
      return bodies.map(parse)
    },
    async claim(jobId, requestId, claimant, { claimMs, now = Date.now() }) {
      return toChange(await client.mutation(api.inputRequests.claim, { secret, jobId, requestId, claimant, claimMs, now }))
    },
    async answer(jobId, requestId, answer, { now = Date.now(), claimant, claimMs } = {}) {
      return toChange(await client.mutation(api.inputRequests.answer, { secret, jobId, requestId, answer: JSON.stringify(answer), now, ...(claimant === undefined ? {} : { claimant }), ...(claimMs === undefined ? {} : { claimMs }) }))
    },
    async close(jobId, requestId, status, now = Date.now()) {
      return toChange(await client.mutation(api.inputRequests.close, { secret, jobId, requestId, status, now }))
    },
    async consume(jobId, requestId, now = Date.now()) {
      return await client.mutation(api.inputRequests.consume, { secret, jobId, requestId, now })
    },
  }
}
