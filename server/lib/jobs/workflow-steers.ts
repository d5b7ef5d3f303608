/**
 * Messages a person sends to a workflow's running agent step from the run view ("steer"): kept in
 * the run's own queue (`run:<jobId>` in the message queue store, beside conversations' queues),
 * taken by that step at its next round boundary as the person's turn, exactly as a chat answer
 * takes one (agent-run.ts): in the step's stored checkpoint before the entry goes, so a crash
 * before that gives it once after the restart and never twice. A step that ends before reading
 * one leaves it unread: it goes with the run's end (the run view says it was not read).
 */
import type { MessageQueueStore } from '../stores/threads/message-queue-store'
import type { JobStore } from '../stores/jobs/job-store'
import type { RunSteering } from './run/chat'
import { RefusalError } from '../domain-error'
import { MAX_QUEUED_MESSAGES } from '../../../shared/types/message-queue'
import type { BackgroundJob } from '../../../shared/types/job'

/** The queue key of a run's steers. */
const queueOf = (jobId: string) => `run:${jobId}`

export class WorkflowSteers {
  constructor(private readonly queue: MessageQueueStore, private readonly jobs: Pick<JobStore, 'getJob'>) {}

  /** Hands `content` to `job`'s running agent step `nodeId` (409 when it is not running, or 20 wait already). */
  async send(job: BackgroundJob, nodeId: string, content: string): Promise<{ id: string }> {
    const current = await this.jobs.getJob(job.id)
    if (current?.type !== 'workflow' || current.status !== 'streaming') throw new RefusalError('This run has ended; there is no step to send to.', 409)
    // A step of the run's own graph (the run view's steps; not one inside a loop or a child run).
    const node = current.request?.workflow?.definition.nodes.find(candidate => candidate.id === nodeId)
    if (node?.kind !== 'agent' || current.workflowState?.nodeStates[nodeId]?.status !== 'running') throw new RefusalError(`Step "${nodeId.slice(0, 100)}" is not an agent step running now; send to one while it runs.`, 409)
    const items = await this.queue.list(queueOf(job.id))
    if (items.length >= MAX_QUEUED_MESSAGES) throw new RefusalError(`This run already has ${MAX_QUEUED_MESSAGES} messages waiting for its steps; wait for them to be read.`, 409)
    const now = Date.now()
    const id = crypto.randomUUID()
    await this.queue.add({ id, threadId: queueOf(job.id), userId: job.userId, content, model: 'workflow', position: (items.at(-1)?.position ?? 0) + 1, createdAt: now, updatedAt: now, steerJobId: job.id, steerNodeId: nodeId })
    return { id }
  }

  /** Where `job`'s step `nodeId` reads the messages sent to it. */
  steeringFor(job: BackgroundJob, nodeId: string): RunSteering {
    return {
      take: async (given) => {
        const handed = (await this.queue.list(queueOf(job.id))).filter(item => item.steerJobId === job.id && item.steerNodeId === nodeId)
        // Already in the step's conversation (a crash came before their entries went): they go now.
        for (const item of handed.filter(item => given.has(item.id))) await this.queue.remove(item.id)
        return handed.filter(item => !given.has(item.id)).map(item => ({ id: item.id, content: item.content }))
      },
      delivered: async (ids) => {
        for (const id of ids) await this.queue.remove(id)
      },
    }
  }

  /** A run ended: what its steps did not read goes with it. */
  async afterRun(job: BackgroundJob): Promise<void> {
    if (job.type !== 'workflow') return
    for (const item of await this.queue.list(queueOf(job.id))) await this.queue.remove(item.id)
  }

  /** After a restart: runs that ended meanwhile (the end's clean-up cut short) lose their leftovers. */
  async recover(): Promise<void> {
    for (const key of (await this.queue.threadsWithItems(1_000)).filter(key => key.startsWith('run:'))) {
      const job = await this.jobs.getJob(key.slice(4))
      if (job?.status !== 'streaming') for (const item of await this.queue.list(key)) await this.queue.remove(item.id)
    }
  }
}
