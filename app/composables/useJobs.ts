import type { JobNotification, JobStatus, JobSummary } from '../../shared/types/job'

/** The session's jobs and the notifications of the ones that ended unwatched. */
export function useJobs() {
  /** Recent jobs, running ones first. */
  async function list(query: { limit?: number, status?: JobStatus | 'waiting' } = {}): Promise<JobSummary[]> {
    return (await $fetch<{ jobs: JobSummary[] }>('/api/jobs', { query })).jobs
  }
  /** Stops a job (idempotent). */
  async function abort(jobId: string): Promise<void> {
    await $fetch(`/api/jobs/${jobId}/abort`, { method: 'POST' })
  }
  /** Unread notifications, newest first. */
  async function unreadNotifications(limit: number): Promise<JobNotification[]> {
    return (await $fetch<{ notifications: JobNotification[] }>('/api/notifications', { query: { unread: 'true', limit } })).notifications
  }
  /** Marks notifications read. */
  async function markRead(ids: string[]): Promise<void> {
    await $fetch('/api/notifications/read', { method: 'POST', body: { ids } })
  }
  return { list, abort, unreadNotifications, markRead }
}
