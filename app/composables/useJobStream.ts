import { onScopeDispose, ref, watch, type Ref } from 'vue'
import { applyJobEvent, emptyJobView, isFinished, type JobView } from '../utils/job-events'
import type { JobStreamEvent } from '../../shared/types/job-events'

/** The EventSource constructor (injectable for tests). */
export type EventSourceFactory = (url: string) => EventSource

const EVENT_TYPES = ['snapshot', 'delta', 'tool-call', 'workflow-state', 'input-request', 'status'] as const satisfies ReadonlyArray<JobStreamEvent['type']>

/**
 * Attaches to a job's event stream and keeps a live view of it. The browser's EventSource resends
 * `Last-Event-ID` when it reconnects, so a dropped connection continues without a gap or a
 * duplicate; if the stream closes for good before the end (server restart), it reconnects after
 * a pause with `?lastEventId=`. The stream closes when the job ends or the caller's scope is gone.
 */
export function useJobStream(jobId: Ref<string | undefined>, options: { createEventSource?: EventSourceFactory, onFinished?: (view: JobView) => void, retryMs?: number } = {}) {
  const createEventSource = options.createEventSource ?? ((url: string) => new EventSource(url))
  const view = ref<JobView | undefined>()
  /** The connection dropped and is being made again (the answer goes on on the server meanwhile). */
  const reconnecting = ref(false)
  let source: EventSource | undefined
  let retryTimer: ReturnType<typeof setTimeout> | undefined

  function close(): void {
    source?.close()
    source = undefined
    if (retryTimer) clearTimeout(retryTimer)
    retryTimer = undefined
  }

  function connect(id: string): void {
    close()
    const last = view.value?.jobId === id ? view.value.lastEventId : undefined
    const url = `/api/jobs/${encodeURIComponent(id)}/stream${last ? `?lastEventId=${encodeURIComponent(last)}` : ''}`
    const current = createEventSource(url)
    source = current
    for (const type of EVENT_TYPES) {
      current.addEventListener(type, (event) => {
        const message = event as MessageEvent<string>
        const before = view.value ?? emptyJobView(id)
        // The server's frames are JobStreamEvents without their `type`, which is the SSE event name.
        const data = JSON.parse(message.data) as Omit<JobStreamEvent, 'type'>
        const after = applyJobEvent(before, { type, ...data } as JobStreamEvent, message.lastEventId || undefined)
        view.value = after
        reconnecting.value = false
        if (type === 'status' || (type === 'snapshot' && isFinished(after))) {
          close()
          options.onFinished?.(after)
        }
      })
    }
    current.addEventListener('error', () => {
      if (source === current && !(view.value && isFinished(view.value))) reconnecting.value = true
      // CONNECTING: the browser retries by itself. CLOSED: it gave up (e.g. the server restarted).
      if (current.readyState === 2 && source === current && !(view.value && isFinished(view.value))) {
        retryTimer = setTimeout(() => connect(id), options.retryMs ?? 1500)
      }
    })
  }

  watch(jobId, (id) => {
    if (!id) {
      close()
      view.value = undefined
      return
    }
    if (view.value?.jobId !== id) view.value = emptyJobView(id)
    connect(id)
  }, { immediate: true })

  onScopeDispose(close)
  return { view, reconnecting, close }
}
