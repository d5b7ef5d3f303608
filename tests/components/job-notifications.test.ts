import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { useToast } from '@nuxt/ui/composables/useToast'
import { useJobNotifications } from '../../app/composables/useJobNotifications'

// The tab's watch of running jobs: an answer that ends while the person is on another page of the
// app is announced by a toast, also when it was short enough to start and end between two looks.

let streaming: string[]
/** What `GET /api/jobs` lists without a status (recent jobs, ended ones too). */
let records: Array<{ id: string, type: string, status: string, threadId: string, prompt: string }>
let unread: Array<{ id: string, jobId: string, threadId: string, kind: string, title: string, body: string }>
let markedRead: string[]

beforeEach(() => {
  vi.useFakeTimers()
  streaming = []
  records = []
  unread = []
  markedRead = []
  app.runWithContext(() => useToast().clear())
  vi.stubGlobal('$fetch', async (url: string, options: { body?: { ids: string[] } } = {}) => {
    if (url === '/api/jobs') return { jobs: (options as { query?: { status?: string } }).query?.status === 'streaming' ? streaming.map(id => ({ id, status: 'streaming' })) : records }
    if (url === '/api/notifications') return { notifications: unread.splice(0) }
    if (url === '/api/notifications/read') {
      markedRead.push(...options.body!.ids)
      return { marked: options.body!.ids.length }
    }
    throw new Error(`unexpected ${url}`)
  })
})

/** The composable as a page of the app gets it (inside the app's context, as its toaster expects). */
const app = createApp({})
const notificationsOfThisTab = () => app.runWithContext(() => useJobNotifications())
const toastTitles = () => app.runWithContext(() => useToast().toasts.value.map(toast => toast.title))

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

const answerReady = (jobId: string) => ({ id: `note-${jobId}`, jobId, threadId: `thread-${jobId}`, kind: 'job-complete', title: 'Your answer is ready', body: 'The **answer**.' })

describe('the watch of running jobs', () => {
  it('announces an answer the person left while it ran, though it ended before the watch saw it running', async () => {
    const notifications = notificationsOfThisTab()
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    // A short answer: started, left, and ended between two looks.
    notifications.leftWhileRunning('job-short')
    unread.push(answerReady('job-short'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    expect(markedRead).toEqual(['note-job-short'])
    // Announced once: later looks find nothing new.
    await vi.advanceTimersByTimeAsync(10_000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    stop()
  })

  it('announces an answer it saw running when it ends, and says nothing while answers run', async () => {
    const notifications = notificationsOfThisTab()
    streaming = ['job-long']
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual([])
    streaming = []
    unread.push(answerReady('job-long'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    stop()
  })

  it('looks again at a left answer after a look that failed (offline for a moment)', async () => {
    const notifications = notificationsOfThisTab()
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    notifications.leftWhileRunning('job-offline')
    const online = vi.mocked($fetch)
    vi.stubGlobal('$fetch', async () => {
      throw new Error('offline')
    })
    await vi.advanceTimersByTimeAsync(5000)
    vi.stubGlobal('$fetch', online)
    unread.push(answerReady('job-offline'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    stop()
  })

  it('reads the notes of a conversation the person has open, and leaves the others to be announced', async () => {
    const notifications = notificationsOfThisTab()
    // An answer that ended before its page's stream attached left a note, though the page shows it.
    unread.push(answerReady('job-seen'), answerReady('job-elsewhere'))
    await notifications.readNotesOf({ threadId: 'thread-job-seen' })
    expect(markedRead).toEqual(['note-job-seen'])
    // A workflow run's page reads its job's note.
    markedRead = []
    unread.push(answerReady('job-run'), answerReady('job-other'))
    await notifications.readNotesOf({ jobId: 'job-run' })
    expect(markedRead).toEqual(['note-job-run'])
  })

  it('looks once more when an answer has ended but its note is not stored yet', async () => {
    const notifications = notificationsOfThisTab()
    streaming = ['job-late']
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    streaming = []
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual([])
    unread.push(answerReady('job-late'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    stop()
  })

  it('announces an answer the person left from its record when no note comes (a viewer was still counted as it ended)', async () => {
    const notifications = notificationsOfThisTab()
    streaming = ['job-left']
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    // The person leaves the page; the server still counted its stream when the answer ended, so it left no note.
    notifications.leftWhileRunning('job-left')
    streaming = []
    records = [{ id: 'job-left', type: 'chat', status: 'complete', threadId: 'thread-left', prompt: 'Write a long story' }]
    await vi.advanceTimersByTimeAsync(5000)
    // Looked once more for a note that may be on its way.
    expect(toastTitles()).toEqual([])
    await vi.advanceTimersByTimeAsync(5000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    // Announced once, and a note stored late is read rather than announced again (by a later visit).
    unread.push(answerReady('job-left'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(markedRead).toEqual(['note-job-left'])
    await vi.advanceTimersByTimeAsync(10_000)
    expect(toastTitles()).toEqual(['Your answer is ready'])
    stop()
  })

  it('announces nothing from records for answers it only saw running (watched elsewhere, no note)', async () => {
    const notifications = notificationsOfThisTab()
    streaming = ['job-elsewhere']
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    streaming = []
    records = [{ id: 'job-elsewhere', type: 'chat', status: 'complete', threadId: 'thread-elsewhere', prompt: 'hi' }]
    await vi.advanceTimersByTimeAsync(15_000)
    expect(toastTitles()).toEqual([])
    stop()
  })

  it('does not announce from its record an answer the person came back to and saw end', async () => {
    const notifications = notificationsOfThisTab()
    streaming = ['job-back']
    const stop = notifications.watchRunningJobs(5000)
    await vi.advanceTimersByTimeAsync(0)
    notifications.leftWhileRunning('job-back')
    // Back on its page, which shows the end itself (no note: it was watched).
    notifications.answerFinished({ threadId: 'thread-back', jobId: 'job-back', title: 'Your answer is ready', body: '', tone: 'success', here: true })
    streaming = []
    records = [{ id: 'job-back', type: 'chat', status: 'complete', threadId: 'thread-back', prompt: 'hi' }]
    await vi.advanceTimersByTimeAsync(15_000)
    expect(toastTitles()).toEqual([])
    stop()
  })
})
