import { ref } from 'vue'
import { CLIENT_TOOLS } from '../utils/client-tools'
import { errorMessage } from '../utils/http-error'
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
export function useJobInputs(options: { onNew?: (request: JobInputRequest) => void } = {}) {
  if (options.onNew) announce = options.onNew
  async function refresh(): Promise<void> {
    const now = Date.now()
    requests.value = (await $fetch<{ requests: JobInputRequest[] }>('/api/jobs/inputs')).requests.filter(request => request.expiresAt > now)
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
      requests.value = requests.value.filter(item => item.id !== request.id)
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode
      if (status === 409 || status === 410 || status === 404) requests.value = requests.value.filter(item => item.id !== request.id)
      throw new Error(errorMessage(error, 'The answer could not be sent; try again.'))
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

  return { requests, refresh, answer, runClientTool, watch }
}
