/**
 * In-memory job store for tests and throwaway runs. Records are copied in and out, so callers
 * cannot mutate stored state by accident, exactly as with a real database.
 */
import { randomUUID } from 'node:crypto'
import type { BackgroundJob, JobNotification } from '../../../../shared/types/job'
import { listLimit, type JobStore } from './job-store'
import { createMemoryInputRequests } from './input-requests-memory'
import { applyComplete, applyFailure, applyMetadata, applyProgress, applyToolExecution, compareForList, newJobRecord, withAppendedEvents } from './job-record'
import type { StoredJobEvent } from '../../../../shared/types/job-events'

/** Creates an empty in-memory store. */
export function createMemoryJobStore(): JobStore {
  const jobs = new Map<string, BackgroundJob>()
  const notifications = new Map<string, JobNotification>()
  /** Each running job's run log (dropped when it ends). */
  const logs = new Map<string, StoredJobEvent[]>()
  const { deleteForJobs, clear: clearInputRequests, ...inputRequests } = createMemoryInputRequests()

  /** Applies `change` to a streaming job; false when missing or finished. */
  function mutate(jobId: string, change: (job: BackgroundJob) => void): boolean {
    const job = jobs.get(jobId)
    if (!job || job.status !== 'streaming') return false
    change(job)
    return true
  }

  return {
    name: 'memory',
    ...inputRequests,
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
    async appendToolExecution(jobId, round, execution) {
      return mutate(jobId, job => applyToolExecution(job, round, structuredClone(execution)))
    },
    async updateJobMetadata(jobId, update) {
      return mutate(jobId, job => applyMetadata(job, structuredClone(update)))
    },
    async updateWorkflowState(jobId, state) {
      return mutate(jobId, (job) => {
        job.workflowState = structuredClone(state)
        job.updatedAt = Date.now()
      })
    },
    async completeJob(jobId, final) {
      return mutate(jobId, job => applyComplete(job, structuredClone(final)))
    },
    async failJob(jobId, error, final) {
      return mutate(jobId, job => applyFailure(job, 'error', structuredClone(final ?? {}), structuredClone(error)))
    },
    async rejectJob(jobId, reason, final) {
      return mutate(jobId, job => applyFailure(job, 'rejected', structuredClone(final ?? {}), structuredClone(reason)))
    },
    async abortJob(jobId, final) {
      return mutate(jobId, job => applyFailure(job, 'aborted', structuredClone(final ?? {})))
    },
    async listJobsByUser(userId, options = {}) {
      return [...jobs.values()]
        .filter(job => job.userId === userId && (!options.status || job.status === options.status))
        .sort(compareForList)
        .slice(0, listLimit(options.limit))
        .map(job => structuredClone(job))
    },
    async listStreamingJobs() {
      return [...jobs.values()].filter(job => job.status === 'streaming').map(job => structuredClone(job))
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
      for (const notification of notifications.values()) {
        if (removed.has(notification.jobId) || notification.userId === ofUser) notifications.delete(notification.id)
      }
      deleteForJobs(removed)
      return removed.size
    },
    async addNotification({ now, ...fields }) {
      const notification: JobNotification = { ...fields, id: randomUUID(), createdAt: now ?? Date.now() }
      notifications.set(notification.id, notification)
      return { ...notification }
    },
    async listNotifications(userId, options = {}) {
      return [...notifications.values()]
        .filter(item => item.userId === userId && (!options.unreadOnly || item.readAt === undefined))
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, listLimit(options.limit))
        .map(item => ({ ...item }))
    },
    async markNotificationsRead(userId, ids, now = Date.now()) {
      const wanted = ids ? new Set(ids) : undefined
      let changed = 0
      for (const item of notifications.values()) {
        if (item.userId === userId && item.readAt === undefined && (!wanted || wanted.has(item.id))) {
          item.readAt = now
          changed++
        }
      }
      return changed
    },
    async ping() {},
    async close() {
      jobs.clear()
      notifications.clear()
      clearInputRequests()
    },
  }
}
