/** How a job list shows what each job waits on its user for. */
import type { JobInputRequest } from '../../../../shared/types/input-request'
import type { JobSummary } from '../../../../shared/types/job'

/** `summary` with the open requests of its job among `open` (unchanged when there are none or it has ended). */
export function withWaits(summary: JobSummary, open: readonly JobInputRequest[]): JobSummary {
  if (summary.status !== 'streaming') return summary
  const mine = open.filter(request => request.jobId === summary.id)
  if (mine.length === 0) return summary
  return { ...summary, waitingFor: mine.map(({ id, kind, title, expiresAt }) => ({ id, kind, title, expiresAt })) }
}
