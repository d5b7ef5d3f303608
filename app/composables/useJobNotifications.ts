import { ref } from 'vue'
import { useJobs } from './useJobs'
import { useToasts } from './useToasts'
import type { JobInputRequest } from '../../shared/types/input-request'

const permission = ref<NotificationPermission | 'unsupported'>('default')
const asked = ref(false)
const ASKED_KEY = 'or3:notifications-asked'

/**
 * Telling the user about answers that finished while they were elsewhere: an in-app toast, and a
 * browser notification when the tab is hidden and they allowed it. Permission is asked once, only
 * after an answer has finished while they were away, never on first load.
 */
export function useJobNotifications() {
  const { show } = useToasts()
  const jobs = useJobs()

  function init(): void {
    if (typeof window === 'undefined') return
    permission.value = 'Notification' in window ? Notification.permission : 'unsupported'
    asked.value = localStorage.getItem(ASKED_KEY) === '1'
  }

  /** Whether to offer the "notify me" prompt now. */
  function shouldOffer(): boolean {
    return permission.value === 'default' && !asked.value
  }

  async function requestPermission(): Promise<void> {
    asked.value = true
    localStorage.setItem(ASKED_KEY, '1')
    if (permission.value === 'unsupported') return
    permission.value = await Notification.requestPermission()
  }

  function declinePermission(): void {
    asked.value = true
    localStorage.setItem(ASKED_KEY, '1')
  }

  /** An answer finished; `here` says whether the user is looking at its thread right now. */
  function answerFinished(options: { threadId: string, title: string, body: string, tone: 'success' | 'error' | 'info', here: boolean }): void {
    const hidden = typeof document !== 'undefined' && document.visibilityState === 'hidden'
    if (!options.here) show({ title: options.title, body: options.body, tone: options.tone, to: `/chat/${options.threadId}` })
    if (hidden && permission.value === 'granted') {
      const notification = new Notification(options.title, { body: options.body, tag: options.threadId })
      notification.onclick = () => {
        window.focus()
        window.location.assign(`/chat/${options.threadId}`)
      }
    }
  }

  /** A job waits for the person: a toast, and a browser notification when the tab is hidden and they allowed it. */
  function inputNeeded(request: Pick<JobInputRequest, 'id' | 'title' | 'kind'>): void {
    show({ title: 'Waiting for you', body: request.title, tone: 'info' }, 12_000)
    if (typeof document !== 'undefined' && document.visibilityState === 'hidden' && permission.value === 'granted') {
      const notification = new Notification('An answer waits for you', { body: request.title, tag: request.id })
      notification.onclick = () => window.focus()
    }
  }

  /**
   * Shows answers that ended with nobody watching them (the server records those), then marks
   * them read: on a visit, and whenever one of this session's running jobs ends elsewhere.
   */
  async function showUnread(): Promise<void> {
    // Open requests show on the page themselves; their notes only matter to a later visit's list.
    const notifications = (await jobs.unreadNotifications(5)).filter(item => item.kind !== 'input-needed')
    if (notifications.length === 0) return
    const hidden = typeof document !== 'undefined' && document.visibilityState === 'hidden'
    for (const item of notifications.slice(0, 3).reverse()) {
      show({ title: item.title, body: item.body, tone: item.kind === 'job-error' ? 'error' : 'success', to: `/chat/${item.threadId}` }, 12_000)
      if (hidden && permission.value === 'granted') new Notification(item.title, { body: item.body, tag: item.jobId })
    }
    if (notifications.length > 3) show({ title: `${notifications.length - 3} more answers finished while you were away`, tone: 'info', to: '/jobs' })
    await jobs.markRead(notifications.map(item => item.id))
  }

  /**
   * Watches this session's running jobs (a light poll); when one ends, shows what the server
   * recorded for it. Returns a stopper.
   */
  function watchRunningJobs(intervalMs = 5000): () => void {
    let running = new Set<string>()
    const poll = async () => {
      try {
        const streaming = await jobs.list({ status: 'streaming', limit: 50 })
        const now = new Set(streaming.map(job => job.id))
        const ended = [...running].some(id => !now.has(id))
        running = now
        if (ended) await showUnread()
      } catch {
        // Offline for a moment: try again at the next tick.
      }
    }
    void poll()
    const timer = setInterval(() => void poll(), intervalMs)
    return () => clearInterval(timer)
  }

  return { permission, init, shouldOffer, requestPermission, declinePermission, answerFinished, inputNeeded, showUnread, watchRunningJobs }
}
