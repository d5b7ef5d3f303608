import { ref } from 'vue'
import { useJobs } from './useJobs'
import { useToasts } from './useToasts'
import { plainPreview } from '../utils/plain-text'
import { tr } from '../utils/i18n'
import type { JobInputRequest } from '../../shared/types/input-request'
import type { JobNotification } from '../../shared/types/job'

const permission = ref<NotificationPermission | 'unsupported'>('default')
const asked = ref(false)
const ASKED_KEY = 'or3:notifications-asked'
/** The toast shown for each open wait, removed when the wait is answered. */
const waitToasts = new Map<string, string | number>()
/**
 * Jobs a page of this tab was showing when the person left it: the watch of running jobs counts
 * them as running, so one that ends before its next look (a short answer) is still announced.
 */
const leftRunning = new Set<string>()
/**
 * Those of them not announced yet. The server leaves a note only when no viewer watched the end,
 * and a page the person just left may still count as watching there (its stream's close not yet
 * seen): such an answer is announced from its own record (`watchRunningJobs`).
 */
const leftUnannounced = new Set<string>()
/** The toast of an answer announced from its record, by how it ended. */
const ENDED_TITLES = { complete: 'notify.ended.complete', error: 'notify.ended.error', aborted: 'notify.ended.aborted', rejected: 'notify.ended.rejected' } as const
/** What an answer's note is about: its conversation, and the job (a workflow run's page shows one job). */
export interface NoteSubject {
  threadId: string
  jobId?: string
}
/** Whether a note's conversation or run is the one on view in this tab (set by the layout). */
let isReading: (subject: NoteSubject) => boolean = () => false

/** Whether the person is looking at this conversation now (on view, in a visible tab). */
function readingNow(subject: NoteSubject): boolean {
  return typeof document !== 'undefined' && document.visibilityState === 'visible' && isReading(subject)
}

/**
 * Telling the user about answers that finished while they were elsewhere: an in-app toast, and a
 * browser notification when the tab is hidden and they allowed it. Permission is asked once, only
 * after an answer has finished while they were away, never on first load.
 */
export function useJobNotifications() {
  const { show, dismiss } = useToasts()
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

  /** Tells which conversation this tab shows, so nothing announces an answer the person is reading. */
  function setReading(check: (subject: NoteSubject) => boolean): void {
    isReading = check
  }

  /**
   * An answer finished; `here` says whether its thread is this tab's page (which saw `jobId` end:
   * it is not announced again, though the person had left it running before). The preview is
   * plain words (no markdown marks). Nothing shows in a tab whose person is reading it.
   */
  function answerFinished(options: { threadId: string, jobId?: string, title: string, body: string, tone: 'success' | 'error' | 'info', here: boolean }): void {
    if (options.here && options.jobId) leftUnannounced.delete(options.jobId)
    const hidden = typeof document !== 'undefined' && document.visibilityState === 'hidden'
    const body = plainPreview(options.body)
    if (!options.here && !readingNow({ threadId: options.threadId })) show({ title: options.title, body, tone: options.tone, to: `/chat/${options.threadId}` })
    if (hidden && permission.value === 'granted') {
      const notification = new Notification(options.title, { body, tag: options.threadId })
      notification.onclick = () => {
        window.focus()
        window.location.assign(`/chat/${options.threadId}`)
      }
    }
  }

  /**
   * A job waits for the person: a toast (not when its card is on view, `onView`, which it would
   * only cover), gone when the wait is answered; and a browser notification when the tab is hidden
   * and they allowed it.
   */
  function inputNeeded(request: Pick<JobInputRequest, 'id' | 'title' | 'kind'>, options: { onView?: boolean } = {}): void {
    if (!options.onView) waitToasts.set(request.id, show({ title: tr('notify.waiting'), body: request.title, tone: 'info' }, 8_000))
    if (typeof document !== 'undefined' && document.visibilityState === 'hidden' && permission.value === 'granted') {
      const notification = new Notification(tr('notify.waitsForYou'), { body: request.title, tag: request.id })
      notification.onclick = () => window.focus()
    }
  }

  /** A wait was answered (here or elsewhere), expired or ended with its job: its toast goes. */
  function inputSettled(requestId: string): void {
    const toast = waitToasts.get(requestId)
    if (toast === undefined) return
    waitToasts.delete(requestId)
    dismiss(toast)
  }

  /**
   * Shows answers that ended with nobody watching them (the server records those), then marks
   * them read: on a visit, and whenever one of this session's running jobs ends elsewhere. An
   * answer in the conversation the person is reading is marked read without a toast. Returns
   * whether there were any notes.
   */
  async function showUnread(): Promise<boolean> {
    return (await showUnreadNotes()).length > 0
  }

  /** `showUnread`, giving the notes it found. */
  async function showUnreadNotes(): Promise<JobNotification[]> {
    // Open requests show on the page themselves; their notes only matter to a later visit's list.
    const notifications = (await jobs.unreadNotifications(5)).filter(item => item.kind !== 'input-needed')
    if (notifications.length === 0) return []
    const hidden = typeof document !== 'undefined' && document.visibilityState === 'hidden'
    const elsewhere = notifications.filter(item => !readingNow(item))
    for (const item of elsewhere.slice(0, 3).reverse()) {
      const body = plainPreview(item.body)
      show({ title: item.title, body, tone: item.kind === 'job-error' ? 'error' : 'success', to: `/chat/${item.threadId}` }, 12_000)
      if (hidden && permission.value === 'granted') new Notification(item.title, { body, tag: item.jobId })
    }
    if (elsewhere.length > 3) show({ title: tr('notify.more', elsewhere.length - 3), tone: 'info', to: '/jobs' })
    await jobs.markRead(notifications.map(item => item.id))
    return notifications
  }

  /**
   * Announces answers the person left running that ended with no note (a viewer was still counted
   * when they ended): from each job's record, as its note would have; a note stored after all is
   * read (now, and at the watch's next look: `announcedFromRecord`), so no later visit announces it again.
   */
  async function announceFromRecords(jobIds: string[], announcedFromRecord: Set<string>): Promise<void> {
    const recent = await jobs.list({ limit: 50 })
    for (const id of jobIds) {
      const job = recent.find(item => item.id === id)
      leftUnannounced.delete(id)
      if (!job || job.status === 'streaming' || job.type !== 'chat' || !job.threadId) continue
      answerFinished({ threadId: job.threadId, title: tr(ENDED_TITLES[job.status]), body: job.prompt ?? '', tone: job.status === 'complete' ? 'success' : job.status === 'error' ? 'error' : 'info', here: false })
      await readNotesOf({ jobId: id })
      announcedFromRecord.add(id)
    }
  }

  /**
   * Watches this session's running jobs (a light poll); when one ends, shows what the server
   * recorded for it. Returns a stopper.
   */
  function watchRunningJobs(intervalMs = 5000): () => void {
    let running = new Set<string>()
    const retried = new Set<string>()
    /** Answers announced from their record at the last look: a note stored since is read at this one. */
    const announcedFromRecord = new Set<string>()
    const poll = async () => {
      const seen = new Set([...running, ...leftRunning])
      leftRunning.clear()
      try {
        for (const id of [...announcedFromRecord]) {
          announcedFromRecord.delete(id)
          await readNotesOf({ jobId: id })
        }
        const streaming = await jobs.list({ status: 'streaming', limit: 50 })
        const now = new Set(streaming.map(job => job.id))
        const ended = [...seen].filter(id => !now.has(id))
        running = now
        if (ended.length === 0) return
        const noted = new Set((await showUnreadNotes()).map(note => note.jobId))
        for (const id of ended) if (noted.has(id)) leftUnannounced.delete(id)
        // A job is marked ended a moment before its note is stored: one that has none yet is
        // looked at once more at the next tick; then one the person left is announced from its record.
        const unnoted = ended.filter(id => !noted.has(id))
        for (const id of unnoted) if (!retried.has(id)) {
          retried.add(id)
          leftRunning.add(id)
        }
        const stillUnnoted = unnoted.filter(id => !leftRunning.has(id) && leftUnannounced.has(id))
        if (stillUnnoted.length > 0) await announceFromRecords(stillUnnoted, announcedFromRecord)
      } catch {
        // Offline for a moment: what was seen running is looked at again at the next tick.
        for (const id of seen) leftRunning.add(id)
      }
    }
    void poll()
    const timer = setInterval(() => void poll(), intervalMs)
    return () => clearInterval(timer)
  }

  /**
   * The person sees answers ended on the page in front of them (a conversation's, or one workflow
   * run's): their notes are read, so none is announced later as if missed. (An answer that ends
   * before the page's stream attaches leaves a note, as no one watched it end.)
   */
  async function readNotesOf(subject: { threadId: string } | { jobId: string }): Promise<void> {
    try {
      const notes = (await jobs.unreadNotifications(50))
        .filter(note => note.kind !== 'input-needed' && ('jobId' in subject ? note.jobId === subject.jobId : note.threadId === subject.threadId))
      if (notes.length > 0) await jobs.markRead(notes.map(note => note.id))
    } catch {
      // Offline for a moment: the note is shown on a later visit, which says no more than it should.
    }
  }

  /** The person left a page showing `jobId` running: its end is announced (see `watchRunningJobs`). */
  function leftWhileRunning(jobId: string): void {
    leftRunning.add(jobId)
    leftUnannounced.add(jobId)
  }

  return { permission, init, shouldOffer, requestPermission, declinePermission, setReading, answerFinished, inputNeeded, inputSettled, showUnread, watchRunningJobs, leftWhileRunning, readNotesOf }
}
