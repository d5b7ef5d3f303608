import { ref } from 'vue'
import { CLIENT_TOOLS } from '../utils/client-tools'
import { errorMessage, errorStatus } from '../utils/http-error'
import { tr } from '../utils/i18n'
import type { InputClaim, JobInputRequest } from '../../shared/types/input-request'

/** What the person's running jobs wait on them for, shared by every component of this tab. */
const requests = ref<JobInputRequest[]>([])
/** Requests this tab is running a browser tool for now. */
const running = new Set<string>()
/** Requests this tab has seen (each is announced and auto-run once). */
const seen = new Set<string>()
let tabId: string | undefined
/** Told of each request this tab sees for the first time (the layout's toast and notification). */
let announce: ((request: JobInputRequest) => void) | undefined
/** Told when a request this tab showed is no longer open (its toast goes with it). */
let settled: ((requestId: string) => void) | undefined
/** Jobs this page streams live now (how many views of each): their waits show in the conversation itself. */
const jobsOnView = new Map<string, number>()
/** Requests a job stream said are no longer open: a poll that was already on its way cannot bring them back. */
const closedByStream = new Set<string>()
const MAX_CLOSED_REMEMBERED = 500

/** Sets the shared list, telling `settled` of each request that left it. */
function setRequests(next: JobInputRequest[]): void {
  const kept = new Set(next.map(request => request.id))
  for (const request of requests.value) if (!kept.has(request.id)) settled?.(request.id)
  requests.value = next
}

/** This tab's id, the claimant of the browser tool calls it runs (kept across reloads of the tab). */
function currentTabId(): string {
  if (tabId) return tabId
  const key = 'or3:tab-id'
  tabId = sessionStorage.getItem(key) ?? `tab-${crypto.randomUUID()}`
  sessionStorage.setItem(key, tabId)
  return tabId
}

/**
 * Jobs that wait for this person (browser tools, approvals, questions): the open requests (a light
 * poll of `GET /api/jobs/inputs`, plus a refresh whenever a job stream says one changed), answering
 * them, and running the browser tools this tab has. A tool that needs no consent runs as soon as a
 * tab sees its call; one that does waits for "Allow" on its card. The claim makes sure only one tab
 * runs a call; the first answer counts, so a tab that loses the race just drops the card.
 */
export function useJobInputs(options: { onNew?: (request: JobInputRequest) => void, onSettled?: (requestId: string) => void } = {}) {
  if (options.onNew) announce = options.onNew
  if (options.onSettled) settled = options.onSettled
  async function refresh(): Promise<void> {
    const now = Date.now()
    setRequests((await $fetch<{ requests: JobInputRequest[] }>('/api/jobs/inputs')).requests.filter(request => request.expiresAt > now && !closedByStream.has(request.id)))
    for (const request of requests.value) {
      if (seen.has(request.id)) continue
      seen.add(request.id)
      announce?.(request)
      const tool = request.kind === 'client-tool' ? CLIENT_TOOLS[request.toolName ?? ''] : undefined
      if (tool && !tool.consent) void runClientTool(request, true)
    }
  }

  /** Sends the answer; the card goes at once. Throws the server's message (400: what to fix; 409/410: too late). */
  async function answer(request: JobInputRequest, body: Record<string, unknown>): Promise<void> {
    try {
      await $fetch(`/api/jobs/${encodeURIComponent(request.jobId)}/input/${encodeURIComponent(request.id)}`, { method: 'POST', body })
      setRequests(requests.value.filter(item => item.id !== request.id))
    } catch (error) {
      const status = errorStatus(error)
      if (status === 409 || status === 410 || status === 404) setRequests(requests.value.filter(item => item.id !== request.id))
      throw new Error(errorMessage(error, tr('errors.answerNotSent')))
    }
  }

  /**
   * Runs a browser tool call here if this tab claims it first: with `allowed` false it tells the
   * model the person said no. Does nothing for a tool this tab does not have.
   */
  async function runClientTool(request: JobInputRequest, allowed: boolean): Promise<void> {
    const tool = CLIENT_TOOLS[request.toolName ?? '']
    if (!tool || running.has(request.id)) return
    running.add(request.id)
    try {
      const claim = await $fetch<InputClaim>(`/api/jobs/${encodeURIComponent(request.jobId)}/input/${encodeURIComponent(request.id)}/claim`, { method: 'POST', body: { claimant: currentTabId() } })
      if (!claim.claimed) return
      // The result counts only from the tab that holds the claim: it says which tab it is.
      let body: Record<string, unknown>
      if (!allowed) {
        body = { error: 'the user did not allow it' }
      } else {
        try {
          body = { result: await tool.run(JSON.parse(request.arguments || '{}') as Record<string, unknown>) }
        } catch (error) {
          body = { error: (error instanceof Error ? error.message : String(error)).slice(0, 1_000) || 'it failed in the browser' }
        }
      }
      await answer(request, { ...body, claimant: currentTabId() })
    } catch {
      // Another tab answered first, or the request expired: the next refresh drops it.
    } finally {
      running.delete(request.id)
    }
  }

  /** Polls every `intervalMs` (and whenever the tab becomes visible); returns a stopper. */
  function watch(intervalMs = 3_000): () => void {
    const poll = () => refresh().catch(() => {})
    const onVisible = () => {
      if (document.visibilityState === 'visible') void poll()
    }
    void poll()
    const timer = setInterval(poll, intervalMs)
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      clearInterval(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }

  /**
   * What a job's live stream says of its waits, taken at once (the stream carries every change, so
   * a request answered in another tab or on another device leaves this one as soon as the event
   * arrives, not at the next poll): requests it reports no longer open go, and all of them when the
   * job has ended. New open ones are fetched (their full shape comes from the list).
   */
  function takeFromStream(jobId: string, streamed: readonly Pick<JobInputRequest, 'id' | 'status'>[], jobEnded: boolean): void {
    const closed = new Set(streamed.filter(request => request.status !== 'open').map(request => request.id))
    for (const id of closed) closedByStream.add(id)
    while (closedByStream.size > MAX_CLOSED_REMEMBERED) closedByStream.delete(closedByStream.values().next().value!)
    const remaining = requests.value.filter(request => request.jobId !== jobId || (!jobEnded && !closed.has(request.id)))
    if (remaining.length !== requests.value.length) setRequests(remaining)
    const known = new Set(requests.value.map(request => request.id))
    if (!jobEnded && streamed.some(request => request.status === 'open' && !known.has(request.id))) void refresh().catch(() => {})
  }

  /** Marks a job as streamed live on this page until the returned function is called. */
  function showing(jobId: string): () => void {
    jobsOnView.set(jobId, (jobsOnView.get(jobId) ?? 0) + 1)
    return () => {
      const left = (jobsOnView.get(jobId) ?? 1) - 1
      if (left > 0) jobsOnView.set(jobId, left)
      else jobsOnView.delete(jobId)
    }
  }

  /** Whether the job is streamed live on this page (and the tab is visible): its waits are in front of the person. */
  function isOnView(jobId: string): boolean {
    return jobsOnView.has(jobId) && document.visibilityState === 'visible'
  }

  return { requests, refresh, answer, runClientTool, watch, takeFromStream, showing, isOnView }
}
