/**
 * After a restart (or, on a shared store, after another instance died): every job left
 * `streaming` is resumed from its checkpoint, or ended with an error that says why it cannot be.
 */
import type { ServerConfig } from '../config/server-config'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import type { ChatEndpoint } from '../openrouter/chat-client'
import type { SecretBox } from '../security/secret-box'
import type { JobStore } from '../stores/jobs/job-store'
import type { JobLeases } from './leases'
import { planResume, type ResumePlan } from './resume-plan'
import type { BackgroundJob, JobError } from '../../../shared/types/job'

/** How a recovered job is launched again. */
export interface RelaunchPlan {
  endpoint?: ChatEndpoint
  resume?: ResumePlan
  userKey?: string
}

/** What recovery needs from the manager. */
export interface RecoveryContext {
  store: JobStore
  leases?: JobLeases
  config: ServerConfig
  secretBox: SecretBox
  logger?: { info?: (message: string) => void, warn?: (message: string) => void }
  isRunning: (jobId: string) => boolean
  relaunch: (job: BackgroundJob, plan: RelaunchPlan) => void
  /** Ends the job with `error` and reports it finished. */
  fail: (jobId: string, error: JobError) => Promise<void>
}

/** How to relaunch `job`, or why it cannot continue. */
export function planRelaunch(job: BackgroundJob, config: ServerConfig, secretBox: SecretBox): RelaunchPlan | { error: JobError } {
  const { maxResumes } = config.backgroundJobs
  if (job.resumeCount >= maxResumes) {
    return { error: { kind: 'interrupted', message: `The ${job.type === 'workflow' ? 'workflow run' : 'answer'} was interrupted by a server restart ${job.resumeCount + 1} times and is not resumed again, so that a job that brings the server down cannot do it on every start.`, hint: 'Start it again; if it keeps happening, tell the operator (NUXT_BACKGROUND_JOBS_MAX_RESUMES).' } }
  }
  if (job.type === 'workflow' && job.request?.workflow) {
    return { userKey: job.apiKeyCiphertext ? secretBox.open(job.apiKeyCiphertext) : undefined }
  }
  const resume = planResume(job)
  if ('error' in resume) return { error: { kind: 'interrupted', message: `The answer could not continue: ${resume.error}.`, hint: 'Send the message again.' } }
  let userKey: string | undefined
  if (job.apiKeyCiphertext) {
    userKey = secretBox.open(job.apiKeyCiphertext)
    if (userKey === undefined) {
      return { error: { kind: 'interrupted', message: 'The answer was interrupted by a server restart and its API key could not be recovered (the server secret changed).', hint: 'Send the message again.' } }
    }
  }
  try {
    return { endpoint: resolveChatEndpoint(job.request!.model, config, userKey), resume }
  } catch (error) {
    return { error: { kind: 'interrupted', message: `The answer was interrupted by a server restart and cannot continue: ${(error as Error).message}` } }
  }
}

/** Resumes every interrupted job this instance may take; returns how many were picked up. */
export async function recoverInterruptedJobs(context: RecoveryContext): Promise<number> {
  const { store, leases } = context
  // Alone, every streaming job was ours; shared, only jobs whose owner's lease expired, once claimed.
  const interrupted = leases ? await leases.listOrphanedJobs() : await store.listJobs({ streaming: true })
  let resumed = 0
  for (const job of interrupted) {
    if (context.isRunning(job.id)) continue
    if (leases && !(await leases.claim(job.id))) continue
    const plan = planRelaunch(job, context.config, context.secretBox)
    if ('error' in plan) {
      context.logger?.warn?.(`Job ${job.id} is not resumed: ${plan.error.message}`)
      await context.fail(job.id, plan.error)
      continue
    }
    context.logger?.info?.(plan.resume
      ? `Resuming job ${job.id} after a restart (from tool round ${plan.resume.toolRounds}).`
      : `Resuming workflow job ${job.id} after a restart.`)
    context.relaunch(job, plan)
    resumed++
  }
  return resumed
}
