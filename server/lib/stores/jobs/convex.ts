/**
 * The job store for deployments with several Nitro instances: Convex (see convex/). Written
 * against the `query(fn, args)` / `mutation(fn, args)` shape only, so the same code runs with
 * `ConvexHttpClient` in production and with a `convex-test` backend in tests. Every call carries
 * the server secret; writes carry this instance's id, so once another instance has taken a job's
 * lease this one's late writes are refused. Streamed progress, lease renewals and viewer counts
 * go in the instance's heartbeat (../convex/instance-pulse.ts), one mutation for all its jobs.
 */
import type { FunctionReference, FunctionReturnType, OptionalRestArgs } from 'convex/server'
import { api } from '../../../../convex/_generated/api'
import type { BackgroundJob } from '../../../../shared/types/job'
import { listLimit, RunningCapError, type JobLeaseStore, type JobStore } from './job-store'
import { createConvexInputRequests } from './input-requests-convex'
import { InstancePulse } from '../convex/instance-pulse'
import { decodeJobEvent, encodeJobEvent, finalStateOf } from './job-record'
import { createConvexNotifications } from './notifications-convex'
import { LRUCache } from 'lru-cache'
import { splitWorkflowState } from '../../../../shared/workflow-state-parts'

/** What both `ConvexHttpClient` and a `convex-test` instance offer. */
export interface ConvexFunctionClient {
  query<Query extends FunctionReference<'query'>>(query: Query, ...args: OptionalRestArgs<Query>): Promise<FunctionReturnType<Query>>
  mutation<Mutation extends FunctionReference<'mutation'>>(mutation: Mutation, ...args: OptionalRestArgs<Mutation>): Promise<FunctionReturnType<Mutation>>
  action<Action extends FunctionReference<'action'>>(action: Action, ...args: OptionalRestArgs<Action>): Promise<FunctionReturnType<Action>>
}

/** Options of the Convex store. */
export interface ConvexJobStoreOptions {
  client: ConvexFunctionClient
  /** The deployment's OR3_SERVER_SECRET. */
  secret: string
  /** This instance's id; its writes are refused once another instance holds a job's lease. */
  instanceId?: string
  /** How long a lease lasts without renewal. */
  leaseMs?: number
  /** How often the heartbeat goes while this instance runs or follows jobs (a stop asked elsewhere arrives within it). */
  pulseMs?: number
  onPulseError?: (error: unknown) => void
}

/** A job as the Convex functions return it, with its lease. */
type ConvexJob = NonNullable<FunctionReturnType<typeof api.jobs.get>>

const DEFAULT_PULSE_MS = 250

/** Runs whose last written state parts are remembered; the oldest are forgotten, and then written whole once. */
const REMEMBERED_RUNS = 1_000

function toJob(job: ConvexJob): BackgroundJob {
  const { leaseOwner: _owner, leaseExpiresAt: _expires, abortRequested: _abort, ...record } = job
  return record as BackgroundJob
}

/** A Convex job store; pair with `ConvexHttpClient(NUXT_CONVEX_URL)` in production. */
export function createConvexJobStore(options: ConvexJobStoreOptions): JobStore & JobLeaseStore {
  const { client, secret } = options
  const owner = options.instanceId ?? crypto.randomUUID()
  const leaseMs = options.leaseMs ?? 30_000
  const pulse = new InstancePulse({
    intervalMs: options.pulseMs ?? DEFAULT_PULSE_MS,
    send: batch => client.mutation(api.jobs.pulse, { secret, owner, leaseMs, ...batch }),
    onError: options.onPulseError,
  })

  /** Per running workflow: each state part as this instance last wrote it, and when. */
  const writtenParts = new LRUCache<string, { parts: Map<string, string>, at: number }>({ max: REMEMBERED_RUNS })

  return {
    name: 'convex',
    inputRequests: createConvexInputRequests(client, secret),
    notifications: createConvexNotifications(client, secret),
    instanceId: owner,
    leaseMs,
    async createJob(input) {
      const jobId = input.id ?? crypto.randomUUID()
      const created = await client.mutation(api.jobs.create, {
        secret,
        jobId,
        userId: input.userId,
        threadId: input.threadId,
        messageId: input.messageId,
        type: input.type,
        model: input.model,
        request: input.request ? JSON.stringify(input.request) : undefined,
        apiKeyCiphertext: input.apiKeyCiphertext,
        now: input.now ?? Date.now(),
        owner,
        leaseMs,
        caps: input.caps,
      })
      if (typeof created !== 'string') throw new RunningCapError(created.refused, created.limit)
      return (await this.getJob(jobId))!
    },
    async getJob(jobId) {
      const job = await client.query(api.jobs.get, { secret, jobId })
      return job ? toJob(job) : null
    },
    async updateJob(jobId, update) {
      const { now: _now, events, ...progress } = update
      return pulse.progress(jobId, events?.length ? { ...progress, events: events.map(encodeJobEvent) } : progress)
    },
    async readJobEvents(jobId, fromSeq, limit) {
      const read = await client.query(api.jobs.events, { secret, jobId, fromSeq, limit })
      return read ? { events: read.events.map(decodeJobEvent), lastSeq: read.lastSeq, status: read.status } : null
    },
    async updateRunState(jobId, update) {
      const { workflowState, checkpoint, steers, now: at, ...fields } = update
      const now = at ?? Date.now()
      const write = (workflow?: { state: string, parts: Array<{ path: string, body: string }>, knownAt?: number }) => client.mutation(api.jobs.updateRunState, {
        secret,
        jobId,
        ...fields,
        checkpoint: checkpoint === null ? null : checkpoint ? JSON.stringify(checkpoint) : undefined,
        ...(steers ? { steers: JSON.stringify(steers) } : {}),
        ...(workflow ? { workflow } : {}),
        now,
        owner,
      })
      if (!workflowState) return await write() === true
      // The root, and the parts that changed since this instance last wrote the job; all of them
      // when it does not remember, or when anything wrote the job since (shared/workflow-state-parts.ts).
      const { root, parts } = splitWorkflowState(workflowState)
      const send = (known: { parts: Map<string, string>, at: number } | undefined) => write({
        state: root,
        parts: [...parts].filter(([path, body]) => known?.parts.get(path) !== body).map(([path, body]) => ({ path, body })),
        ...(known ? { knownAt: known.at } : {}),
      })
      let written = await send(writtenParts.get(jobId))
      if (written === 'stale') written = await send(undefined)
      if (written !== true) {
        writtenParts.delete(jobId)
        return false
      }
      writtenParts.set(jobId, { parts, at: now })
      return true
    },
    async endJob(jobId, end) {
      const final = finalStateOf(end)
      return client.mutation(api.jobs.finish, {
        secret,
        jobId,
        status: end.status,
        error: final.error,
        content: final.content,
        reasoning: final.reasoning,
        chunksReceived: final.chunksReceived,
        usage: final.usage,
        finishReason: final.finishReason,
        now: final.now ?? Date.now(),
        // Aborting is allowed from any instance (a person's stop wins over the lease).
        ...(end.status === 'aborted' ? {} : { owner }),
      })
    },
    async listJobs(query) {
      if ('streaming' in query) return (await client.query(api.jobs.listStreaming, { secret })).map(toJob)
      const jobs = await client.query(api.jobs.listByUser, { secret, userId: query.userId, status: query.status, limit: listLimit(query.limit) })
      return jobs.map(toJob)
    },
    async cleanupExpired(finishedBefore, logsEndedBefore = finishedBefore, ofUser) {
      if (ofUser !== undefined) {
        let total = 0
        while (true) {
          const { deleted, hasMore } = await client.mutation(api.jobs.deleteEndedOfUser, { secret, userId: ofUser, finishedBefore: Math.min(finishedBefore, Number.MAX_SAFE_INTEGER) })
          total += deleted
          if (!hasMore) return total
        }
      }
      while ((await client.mutation(api.jobs.compactLogs, { secret, endedBefore: logsEndedBefore })).hasMore);
      let total = 0
      while (true) {
        const { deleted, hasMore } = await client.mutation(api.jobs.cleanupExpired, { secret, finishedBefore })
        total += deleted
        if (!hasMore) return total
      }
    },
    async ping() {
      // The cheapest round trip that proves the deployment answers and accepts our secret.
      await client.query(api.jobs.listByUser, { secret, userId: 'health-probe', limit: 1 })
    },
    async close() {
      pulse.close()
    },

    async claimJob(jobId) {
      return client.mutation(api.leases.claim, { secret, jobId, owner, leaseMs })
    },
    holdLease(jobId, onStop) {
      return pulse.hold(jobId, onStop)
    },
    async releaseLease(jobId) {
      return client.mutation(api.leases.release, { secret, jobId, owner })
    },
    async requestAbort(jobId) {
      return client.mutation(api.leases.requestAbort, { secret, jobId })
    },
    async listOrphanedJobs() {
      return (await client.query(api.leases.listOrphaned, { secret })).map(toJob)
    },
    async watchJob(jobId, since) {
      const watched = await client.query(api.jobs.watch, { secret, jobId, since })
      return watched ? { ...watched, job: toJob(watched.job as ConvexJob) } : null
    },
    watchInputRequest(jobId, requestId, onSettled) {
      return pulse.watchRequest(jobId, requestId, onSettled)
    },
    async setParked(jobId, parked) {
      return client.mutation(api.jobs.setParked, { secret, jobId, parked })
    },
    reportViewers(jobId, count) {
      pulse.reportViewers(jobId, count)
    },
    async countRemoteViewers(jobId) {
      return client.query(api.jobs.remoteViewers, { secret, jobId, owner })
    },
  }
}
