/**
 * How the conversation page takes in what the server says of its messages, beside what it already
 * shows: a re-read of the thread (other tabs' changes) and the answer to a send. Pure functions,
 * shared by the chat page and its tests.
 */
import type { ThreadMessage, ThreadPathMessage } from '#shared/types/thread'

/** What a re-read can change of a message the page shows: its status, text length, versions and side-by-side answers. */
function shapeOf(list: readonly ThreadPathMessage[]): string {
  return list.map(message => `${message.id}:${message.status ?? ''}:${message.content.length}:${message.versions?.ids.length ?? 1}:${(message.sideBySide ?? []).map(answer => answer.status).join('/')}`).join()
}

/**
 * The messages after a re-read of the thread (`read`), or undefined when the page's (`shown`) are
 * as new. A message the page has a status for, that the read says is still streaming, stays as the
 * page has it (with the read's versions): streaming here, its live view has newer text than the
 * read; ended here, the server's record of its end was on its way when the read was made (taking
 * the read's "streaming" would make the composer queue the next message behind an answer that is
 * over). Answers side by side follow the read (each column has its own live view).
 */
export function mergeThreadRead(shown: readonly ThreadPathMessage[], read: readonly ThreadPathMessage[]): ThreadPathMessage[] | undefined {
  const local = new Map(shown.map(message => [message.id, message]))
  const merged = read.map((message) => {
    const mine = local.get(message.id)
    return mine?.status && message.status === 'streaming' && !message.sideBySide ? { ...mine, versions: message.versions } : message
  })
  return shapeOf(merged) === shapeOf(shown) ? undefined : merged
}

/**
 * The messages after a send: the question and its answer (several when models answer side by side)
 * after what was shown, each once (a re-read made while the send was on its way may have shown
 * them already). Answers shown side by side before are settled: the conversation went on from the
 * one on view.
 */
export function messagesAfterSend(shown: readonly ThreadPathMessage[], question: ThreadMessage, answers: readonly [ThreadMessage, ...ThreadMessage[]]): ThreadPathMessage[] {
  const added = new Set([question.id, ...answers.map(answer => answer.id)])
  const earlier = shown.filter(message => !added.has(message.id)).map(({ sideBySide: _settled, ...message }) => message)
  return [...earlier, question, answers.length > 1 ? { ...answers[0], sideBySide: [...answers] } : answers[0]]
}
