/** The conversation page taking in a re-read of its thread and a send's answer (app/utils/thread-read.ts). */
import { describe, expect, it } from 'vitest'
import { mergeThreadRead, messagesAfterSend } from '../../app/utils/thread-read'
import type { ThreadMessage, ThreadPathMessage } from '../../shared/types/thread'

const message = (id: string, role: 'user' | 'assistant', content: string, status?: ThreadMessage['status']): ThreadPathMessage =>
  ({ id, threadId: 't', role, content, createdAt: 1, ...(status ? { status, jobId: `job-${id}` } : {}) }) as ThreadPathMessage

describe('mergeThreadRead', () => {
  it('keeps an answer that ended here ended while the read still says streaming (its end not yet stored)', () => {
    const shown = [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi there', 'complete')]
    const read = [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi', 'streaming')]
    expect(mergeThreadRead(shown, read)).toBeUndefined()
  })

  it('keeps an answer streaming here with its live text, and takes the read\'s end once stored', () => {
    const shown = [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi there, how', 'streaming')]
    expect(mergeThreadRead(shown, [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi', 'streaming')])).toBeUndefined()
    expect(mergeThreadRead(shown, [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi there, how are you?', 'complete')])?.[1]).toMatchObject({ status: 'complete', content: 'Hi there, how are you?' })
  })

  it('takes messages another tab sent, streaming as the server has them', () => {
    const shown = [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi', 'complete')]
    const read = [...shown, message('q2', 'user', 'More'), message('a2', 'assistant', '', 'streaming')]
    expect(mergeThreadRead(shown, read)?.map(item => `${item.id}:${item.status ?? ''}`)).toEqual(['q1:', 'a1:complete', 'q2:', 'a2:streaming'])
  })
})

describe('messagesAfterSend', () => {
  it('adds the question and its answer once, though a read made meanwhile showed them already', () => {
    const question = message('q2', 'user', 'One more thing')
    const answer = message('a2', 'assistant', '', 'streaming')
    const shown = [message('q1', 'user', 'Hello'), message('a1', 'assistant', 'Hi', 'complete'), question, answer]
    expect(messagesAfterSend(shown, question, [answer]).map(item => item.id)).toEqual(['q1', 'a1', 'q2', 'a2'])
  })

  it('shows several models\' answers side by side, and settles the earlier side-by-side ones', () => {
    const earlier = { ...message('a1', 'assistant', 'Hi', 'complete'), sideBySide: [message('a1', 'assistant', 'Hi', 'complete'), message('b1', 'assistant', 'Hey', 'complete')] }
    const after = messagesAfterSend([message('q1', 'user', 'Hello'), earlier], message('q2', 'user', 'Next'), [message('a2', 'assistant', '', 'streaming'), message('b2', 'assistant', '', 'streaming')])
    expect(after[1]!.sideBySide).toBeUndefined()
    expect(after.map(item => item.id)).toEqual(['q1', 'a1', 'q2', 'a2'])
    expect(after[3]!.sideBySide?.map(item => item.id)).toEqual(['a2', 'b2'])
  })
})
