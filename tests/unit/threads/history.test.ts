import { describe, expect, it } from 'vitest'
import { threadHistory } from '../../../server/lib/threads/history'
import type { ThreadMessage } from '../../../shared/types/thread'

const message = (fields: Partial<ThreadMessage> & Pick<ThreadMessage, 'role' | 'content'>): ThreadMessage => ({ id: crypto.randomUUID(), threadId: 't', createdAt: 1, ...fields })

describe('threadHistory', () => {
  it('gives a later question an answer that was steered as the model had it: its text split where each message to it was read', () => {
    const answer = message({
      role: 'assistant', status: 'complete', content: 'Searching flights.\n\nThe cheapest is 120 €.',
      steers: [{ id: 's1', content: 'only direct flights', round: 2, contentOffset: 'Searching flights.'.length, at: 2 }],
    })
    expect(threadHistory([message({ role: 'user', content: 'Find me a flight' }), answer], { content: 'Book it' })).toEqual([
      { role: 'user', content: 'Find me a flight' },
      { role: 'assistant', content: 'Searching flights.' },
      { role: 'user', content: 'only direct flights' },
      { role: 'assistant', content: 'The cheapest is 120 €.' },
      { role: 'user', content: 'Book it' },
    ])
  })

  it('keeps an answer without steers whole, and leaves out running and empty answers', () => {
    const history = threadHistory([
      message({ role: 'user', content: 'Hi' }),
      message({ role: 'assistant', status: 'complete', content: '  Hello!  ' }),
      message({ role: 'user', content: 'Again' }),
      message({ role: 'assistant', status: 'error', content: '' }),
      message({ role: 'assistant', status: 'streaming', content: 'half' }),
    ], { content: 'Next' }, 'Be brief.')
    expect(history).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '  Hello!  ' },
      { role: 'user', content: 'Again' },
      { role: 'user', content: 'Next' },
    ])
  })

  it('a steer read before any text is the person\'s turn before the answer', () => {
    const answer = message({ role: 'assistant', status: 'complete', content: 'Short version: yes.', steers: [{ id: 's1', content: 'keep it short', round: 1, contentOffset: 0, at: 1 }] })
    expect(threadHistory([message({ role: 'user', content: 'Explain' }), answer], { content: 'Thanks' }).slice(1, 3)).toEqual([
      { role: 'user', content: 'keep it short' },
      { role: 'assistant', content: 'Short version: yes.' },
    ])
  })
})
