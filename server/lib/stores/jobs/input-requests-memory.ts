/** The input requests of the in-memory job store (see input-request-store.ts for the rules). */
import { randomUUID } from 'node:crypto'
import type { JobInputRequest } from '../../../../shared/types/input-request'
import { newInputRequest, type InputRequestStore } from './input-request-store'
import { INPUT_REQUEST_LIST_LIMIT, inputRequestRules, type InputRequestChange } from '../../../../shared/input-request-rules'

/** The store's methods, and how its job store drops the requests of deleted jobs. */
export function createMemoryInputRequests(): InputRequestStore & { deleteForJobs(jobIds: ReadonlySet<string>): void, clear(): void } {
  const requests = new Map<string, JobInputRequest>()

  function change(jobId: string, requestId: string, apply: (request: JobInputRequest) => InputRequestChange): InputRequestChange {
    const request = requests.get(requestId)
    if (!request || request.jobId !== jobId) return { ok: false, reason: 'missing' }
    const result = apply(structuredClone(request))
    if (result.ok) requests.set(requestId, structuredClone(result.request))
    return result
  }

  return {
    async open(input) {
      for (const request of requests.values()) {
        if (request.jobId === input.jobId && request.key === input.key) return structuredClone(request)
      }
      const request = newInputRequest(structuredClone(input), input.id ?? randomUUID())
      requests.set(request.id, structuredClone(request))
      return request
    },
    async get(jobId, requestId) {
      const request = requests.get(requestId)
      return request && request.jobId === jobId ? structuredClone(request) : null
    },
    async list(query) {
      const found = [...requests.values()].filter(request => 'jobId' in query
        ? request.jobId === query.jobId
        : request.userId === query.userId && request.status === query.status)
      found.sort((a, b) => ('jobId' in query ? a.createdAt - b.createdAt : b.createdAt - a.createdAt))
      return found.slice(0, INPUT_REQUEST_LIST_LIMIT).map(request => structuredClone(request))
    },
    async claim(jobId, requestId, claimant, { claimMs, now = Date.now() }) {
      return change(jobId, requestId, request => inputRequestRules.claim(request, claimant, claimMs, now))
    },
    async answer(jobId, requestId, answer, { now = Date.now(), ...options } = {}) {
      return change(jobId, requestId, request => inputRequestRules.answer(request, structuredClone(answer), { ...options, now }))
    },
    async close(jobId, requestId, status, now = Date.now()) {
      return change(jobId, requestId, request => inputRequestRules.close(request, status, now))
    },
    async consume(jobId, requestId, now = Date.now()) {
      const request = requests.get(requestId)
      if (!request || request.jobId !== jobId) return false
      const consumed = inputRequestRules.consume(request, now)
      if (consumed) requests.set(requestId, consumed)
      return consumed !== undefined
    },
    deleteForJobs(jobIds) {
      for (const [id, request] of requests) if (jobIds.has(request.jobId)) requests.delete(id)
    },
    clear() {
      requests.clear()
    },
  }
}
