/**
 * Live view of a job that another instance runs (multi-instance deployments). Polls the store
 * with backoff (fast while text flows, slower when idle) and replays what changed into this
 * instance's live hub, so local viewers get the same snapshot, deltas, tool-call, input-request and
 * status events as for a local job (requests are read only while a tool call or a workflow runs,
 * the only times a job can wait for its person). Stops when the job ends or nobody here watches any more.
 */
import { type ActiveToolCall, type BackgroundJob } from '../../../shared/types/job'
import type { JobInputRequest } from '../../../shared/types/input-request'
import { toPublicJob } from './public-job'
import type { JobLiveHub } from './live-hub'

/** Options of one relay. */
export interface RemoteJobRelayOptions {
  jobId: string
  hub: JobLiveHub
  /** Reads the job's current state from the shared store. */
  watch: (jobId: string) => Promise<BackgroundJob | null>
  /** Reads what the job asked its person (none given: requests are not relayed). */
  inputRequests?: (jobId: string) => Promise<JobInputRequest[]>
  minIntervalMs?: number
  maxIntervalMs?: number
  onError?: (error: unknown) => void
}

const callKey = (call: ActiveToolCall) => `${call.round}:${call.id}`

/** Starts relaying `jobId`; resolves once the first snapshot is in the hub. Returns a stopper. */
export async function startRemoteJobRelay(options: RemoteJobRelayOptions): Promise<{ stop: () => void }> {
  const { jobId, hub } = options
  const minIntervalMs = options.minIntervalMs ?? 100
  const maxIntervalMs = options.maxIntervalMs ?? 1_000
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const stop = () => {
    stopped = true
    if (timer) clearTimeout(timer)
  }

  const first = await options.watch(jobId)
  if (!first) return { stop }
  hub.open(toPublicJob(first))
  let content = first.content
  let reasoning = first.reasoning
  let calls = new Map(first.activeToolCalls.map(call => [callKey(call), JSON.stringify(call)]))
  const requests = new Map<string, string>()
  const mayWait = (job: BackgroundJob) => job.status === 'streaming' && (job.type === 'workflow' || job.activeToolCalls.some(call => call.status === 'pending' || call.status === 'running'))
  /** Publishes the requests that changed since the last poll; true when one did. */
  const relayRequests = async (job: BackgroundJob): Promise<boolean> => {
    if (!options.inputRequests || !mayWait(job)) return false
    let changed = false
    for (const request of await options.inputRequests(jobId)) {
      const serialized = JSON.stringify(request)
      if (requests.get(request.id) === serialized) continue
      requests.set(request.id, serialized)
      hub.updateInputRequest(jobId, request)
      changed = true
    }
    return changed
  }
  let idlePolls = 0
  let interval = minIntervalMs

  const apply = (job: BackgroundJob): boolean => {
    let changed = false
    if (!job.content.startsWith(content) || !job.reasoning.startsWith(reasoning)) {
      // The job was resumed from a checkpoint and rewound its text: start over from a snapshot.
      hub.open(toPublicJob({ ...job, status: 'streaming' }))
      changed = true
    } else if (job.content.length > content.length || job.reasoning.length > reasoning.length) {
      hub.appendText(jobId, { content: job.content.slice(content.length), reasoning: job.reasoning.slice(reasoning.length) }, job.chunksReceived)
      changed = true
    }
    content = job.content
    reasoning = job.reasoning
    const next = new Map<string, string>()
    for (const call of job.activeToolCalls) {
      const serialized = JSON.stringify(call)
      next.set(callKey(call), serialized)
      if (calls.get(callKey(call)) !== serialized) {
        hub.updateToolCall(jobId, call)
        changed = true
      }
    }
    calls = next
    if (job.status !== 'streaming') {
      hub.finish(jobId, { status: job.status, finishReason: job.finishReason, error: job.error, usage: job.usage, completedAt: job.completedAt ?? Date.now() })
      stop()
    }
    return changed
  }

  const poll = async () => {
    if (stopped) return
    if (hub.viewerCount(jobId) > 0) idlePolls = 0
    else if (++idlePolls >= 3) {
      hub.drop(jobId)
      return stop()
    }
    try {
      const job = await options.watch(jobId)
      if (stopped) return
      if (!job) {
        hub.drop(jobId)
        return stop()
      }
      const changed = apply(job)
      const asked = !stopped && await relayRequests(job)
      interval = changed || asked ? minIntervalMs : Math.min(maxIntervalMs, Math.round(interval * 1.5))
    } catch (error) {
      options.onError?.(error)
      interval = maxIntervalMs
    }
    if (!stopped) {
      timer = setTimeout(poll, interval)
      timer.unref?.()
    }
  }
  if (first.status !== 'streaming') apply(first)
  else {
    await relayRequests(first).catch(error => options.onError?.(error))
    timer = setTimeout(poll, minIntervalMs)
    timer.unref?.()
  }
  return { stop }
}
