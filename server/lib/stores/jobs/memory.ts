/**
 * In-memory job store for tests and throwaway runs. Records are copied in and out, so callers
 * cannot mutate stored state by accident, exactly as with a real database.
 */
import type { BackgroundJob } from '../../../../shared/types/job'
import { listLimit, type JobStore } from './job-store'
import { createMemoryInputRequests } from './input-requests-memory'
import { createMemoryNotifications } from './notifications-memory'
import { applyEnd, applyProgress, applyRunState, compareForList, newJobRecord, withAppendedEvents } from './job-record'
import type { StoredJobEvent } from '../../../../shared/types/job-events'

/** Creates an empty in-memory store. */
export function createMemoryJobStore(): JobStore {
  const jobs = new Map<string, BackgroundJob>()
  /** Each running job's run log (dropped when it ends). */
  const logs = new Map<string, StoredJobEvent[]>()
  const { deleteForJobs, clear: clearInputRequests, ...inputRequests } = createMemoryInputRequests()
  const { deleteFor: deleteNotifications, clear: clearNotifications, ...notifications } = createMemoryNotifications()

  /** Applies `change` to a streaming job; false when missing or finished. */
  function mutate(jobId: string, change: (job: BackgroundJob) => void): boolean {
    const job = jobs.get(jobId)
    if (!job || job.status !== 'streaming') return false
    change(job)
    return true
  }

  return {
    name: 'memory',
    inputRequests,
    notifications,
    async createJob(input) {
      const job = newJobRecord(input)
      if (jobs.has(job.id)) throw new Error(`Job ${job.id} already exists.`)
      jobs.set(job.id, structuredClone(job))
      return job
    },
    async getJob(jobId) {
      const job = jobs.get(jobId)
      return job ? structuredClone(job) : null
    },
    async updateJob(jobId, update) {
      return mutate(jobId, (job) => {
        const copy = structuredClone(update)
        applyProgress(job, copy)
        if (copy.events?.length) logs.set(jobId, withAppendedEvents(logs.get(jobId) ?? [], copy.events))
      })
    },
    async readJobEvents(jobId, fromSeq, limit) {
      const job = jobs.get(jobId)
      if (!job) return null
      const events = (logs.get(jobId) ?? []).filter(event => event.seq >= fromSeq).slice(0, Math.max(0, limit))
      return { events: structuredClone(events), lastSeq: job.eventSeq ?? 0, status: job.status }
    },
    async updateRunState(jobId, update) {
      return mutate(jobId, job => applyRunState(job, structuredClone(update)))
    },
    async endJob(jobId, end) {
      return mutate(jobId, job => applyEnd(job, structuredClone(end)))
    },
    async listJobs(query) {
      const listed = 'streaming' in query
        ? [...jobs.values()].filter(job => job.status === 'streaming')
        : [...jobs.values()]
            .filter(job => job.userId === query.userId && (!query.status || job.status === query.status))
            .sort(compareForList)
            .slice(0, listLimit(query.limit))
      return listed.map(job => structuredClone(job))
    },
    async cleanupExpired(finishedBefore, logsEndedBefore = finishedBefore, ofUser) {
      const removed = new Set<string>()
      for (const job of jobs.values()) {
        if (ofUser !== undefined && job.userId !== ofUser) continue
        if (job.status !== 'streaming' && job.completedAt !== undefined && job.completedAt < logsEndedBefore) logs.delete(job.id)
        if (job.status !== 'streaming' && job.completedAt !== undefined && job.completedAt < finishedBefore) {
          jobs.delete(job.id)
          logs.delete(job.id)
          removed.add(job.id)
        }
      }
      deleteNotifications(removed, ofUser)
      deleteForJobs(removed)
      return removed.size
    },
    async ping() {},
    async close() {
      jobs.clear()
      clearNotifications()
      clearInputRequests()
    },
  }
}
