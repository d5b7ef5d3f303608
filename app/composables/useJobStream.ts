import { onScopeDispose, ref, watch, type Ref } from 'vue'
import { viewAfterEvent, emptyJobView, isFinished, type JobView } from '../utils/job-events'
import type { JobStreamEvent } from '../../shared/types/job-events'
import { liveEvents } from '../utils/live-events'

/** The EventSource constructor (injectable for tests). */
export type EventSourceFactory = (url: string) => EventSource

const EVENT_TYPES = ['snapshot', 'delta', 'tool-call', 'workflow-state', 'input-request', 'status'] as const satisfies ReadonlyArray<JobStreamEvent['type']>

/**
 * Attaches to a job's events and keeps a live view of it. Through the browser's one shared live
 * connection (app/utils/live-events.ts) wherever the browser has SharedWorker, so any number of
 * tabs and jobs share one connection; else (or with `createEventSource`, in tests) through the
 * job's own stream. Either way a dropped connection continues exactly from the last event id (the
 * browser's EventSource resends `Last-Event-ID`; if the stream closes for good before the end, it
 * reconnects after a pause with `?lastEventId=`). It stops when the job ends or the scope is gone.
 */
export function useJobStream(jobId: Ref<string | undefined>, options: { createEventSource?: EventSourceFactory, onFinished?: (view: JobView) => void, retryMs?: number } = {}) {
  const createEventSource = options.createEventSource ?? ((url: string) => new EventSource(url))
  const view = ref<JobView | undefined>()
  /** The connection dropped and is being made again (the answer goes on on the server meanwhile). */
  const reconnecting = ref(false)
  let source: EventSource | undefined
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let stopWatching: (() => void) | undefined
  const shared = options.createEventSource ? null : liveEvents()

  function close(): void {
    stopWatching?.()
    stopWatching = undefined
    source?.close()
    source = undefined
    if (retryTimer) clearTimeout(retryTimer)
    retryTimer = undefined
  }

  /** Applies one event of job `id`; true when the job has ended (the caller stops watching). */
  function apply(id: string, event: JobStreamEvent, eventId: string | undefined): boolean {
    const after = viewAfterEvent(view.value ?? emptyJobView(id), event, eventId)
    view.value = after
    reconnecting.value = false
    if (event.type === 'status' || (event.type === 'snapshot' && isFinished(after))) {
      close()
      options.onFinished?.(after)
      return true
    }
    return false
  }

  function connect(id: string): void {
    close()
    if (shared) {
      stopWatching = shared.watchJob(id, {
        event: message => apply(id, message.event, message.id),
        gone: () => close(),
        connection: (open) => {
          if (!(view.value && isFinished(view.value))) reconnecting.value = !open
        },
      })
      return
    }
    const last = view.value?.jobId === id ? view.value.lastEventId : undefined
    const url = `/api/jobs/${encodeURIComponent(id)}/stream${last ? `?lastEventId=${encodeURIComponent(last)}` : ''}`
    const current = createEventSource(url)
    source = current
    for (const type of EVENT_TYPES) {
      current.addEventListener(type, (event) => {
        const message = event as MessageEvent<string>
        // The server's frames are JobStreamEvents without their `type`, which is the SSE event name.
        const data = JSON.parse(message.data) as Omit<JobStreamEvent, 'type'>
        apply(id, { type, ...data } as JobStreamEvent, message.lastEventId || undefined)
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
