/**
 * 👍 / 👎 on answers: a person rates their own assistant messages (changeable, or taken back), and
 * the admin reads counts per model and day and the latest 👎 with their reasons, never the answers.
 */
import type { FeedbackRow, ThreadStore } from '../stores/threads/thread-store'
import type { ChatThread, ThreadMessage } from '../../../shared/types/thread'
import type { FeedbackReport, MessageFeedback } from '../../../shared/types/personal'
import { RefusalError } from '../domain-error'

/** The most feedback rows one report reads (the newest, when more were given in its days). */
export const FEEDBACK_REPORT_ROWS = 20_000
const RECENT_DOWN = 50

/** Counts per model and UTC day (newest day first, then by model) and the latest 👎, from rows newest first. */
export function feedbackReport(rows: readonly FeedbackRow[]): FeedbackReport {
  const counts = new Map<string, FeedbackReport['byModelAndDay'][number]>()
  for (const row of rows) {
    const day = new Date(row.at).toISOString().slice(0, 10)
    const key = `${day}\u0000${row.model}`
    const entry = counts.get(key) ?? { model: row.model, day, up: 0, down: 0 }
    entry[row.rating]++
    counts.set(key, entry)
  }
  return {
    byModelAndDay: [...counts.values()].sort((a, b) => b.day.localeCompare(a.day) || a.model.localeCompare(b.model)),
    recentDown: rows.filter(row => row.rating === 'down').slice(0, RECENT_DOWN).map(row => ({ model: row.model, ...(row.reason ? { reason: row.reason } : {}), at: row.at })),
  }
}

/** Ratings of answers, and the admin's report of them. */
export class AnswerFeedback {
  constructor(private readonly threads: ThreadStore) {}

  /** Sets (or with null takes back) the owner's rating of an answer in `thread`; answers the message as it is now. */
  async rate(thread: ChatThread, messageId: string, rating: Omit<MessageFeedback, 'at'> | null, now = Date.now()): Promise<ThreadMessage> {
    const message = await this.threads.getMessage(messageId)
    if (!message || message.threadId !== thread.id) throw new RefusalError('This conversation has no such message.', 404)
    if (message.role !== 'assistant') throw new RefusalError('Only answers take feedback, not questions.', 400)
    if (message.status === 'streaming') throw new RefusalError('This answer is still being written; rate it once it ends.', 400)
    const feedback = rating ? { rating: rating.rating, ...(rating.reason ? { reason: rating.reason } : {}), at: now } : null
    await this.threads.setFeedback(messageId, feedback)
    const { feedback: _old, ...rest } = message
    return feedback ? { ...rest, feedback } : rest
  }

  /** The report over the last `days` days. */
  async report(days: number, now = Date.now()): Promise<FeedbackReport> {
    return feedbackReport(await this.threads.listFeedback(now - days * 86_400_000, FEEDBACK_REPORT_ROWS))
  }
}
