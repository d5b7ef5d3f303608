/** The queue under the composer: queueing while an answer runs, and each queued message's actions; steers shown in an answer; reading an answer aloud. */
import { flushPromises, mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import ChatComposer from '../../app/components/ChatComposer.vue'
import ChatMessage from '../../app/components/ChatMessage.vue'
import QueuedMessages from '../../app/components/QueuedMessages.vue'
import type { QueuedMessage } from '../../shared/types/message-queue'

const item = (id: string, content: string, extra: Partial<QueuedMessage> = {}): QueuedMessage => ({ id, threadId: 't', userId: 'u', content, model: 'm', position: 1, createdAt: 1, updatedAt: 1, ...extra })

describe('the composer while an answer runs', () => {
  it('queues the message on Enter or with the Queue button (the field empties); files wait in the composer, saying why', async () => {
    const wrapper = mount(ChatComposer, { props: { busy: true, canQueue: true, modelValue: 'next question' } })
    await wrapper.find('textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('queue')).toEqual([['next question']])
    expect(wrapper.emitted('send')).toBeUndefined()
    expect(wrapper.emitted('update:modelValue')?.at(-1)).toEqual([''])
    await wrapper.setProps({ modelValue: 'and another' })
    await wrapper.find('[data-testid=queue-button]').trigger('click')
    expect(wrapper.emitted('queue')).toEqual([['next question'], ['and another']])
    // Stop stays beside it.
    expect(wrapper.find('[data-testid=stop-button]').exists()).toBe(true)
    const file = { key: 'f', file: new File(['x'], 'notes.txt', { type: 'text/plain' }) }
    await wrapper.setProps({ modelValue: 'with a file', files: [file] })
    await wrapper.find('textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('queue')).toHaveLength(2)
    expect(wrapper.find('[data-testid=composer-held]').text()).toMatch(/Files go with a message sent once the answer ends/)
  })

  it('holds the message without a queue (a page that has none)', async () => {
    const wrapper = mount(ChatComposer, { props: { busy: true, modelValue: 'next' } })
    await wrapper.find('textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('queue')).toBeUndefined()
    expect(wrapper.find('[data-testid=queue-button]').exists()).toBe(false)
  })
})

describe('queued messages', () => {
  it('lists them in order with send now, edit, move and remove; the first cannot move up nor the last down', async () => {
    const wrapper = mount(QueuedMessages, { props: { running: true, items: [item('a', 'first'), item('b', 'second')] } })
    expect(wrapper.findAll('[data-testid=queued-text]').map(text => text.text())).toEqual(['first', 'second'])
    expect(wrapper.find('[role=status]').text()).toMatch(/2 waiting: each starts when the answer before it ends/)
    const row = (index: number) => wrapper.find(`[data-testid=queued-${index}]`)
    expect(row(0).find('[data-testid=queued-up]').attributes('disabled')).toBeDefined()
    expect(row(1).find('[data-testid=queued-down]').attributes('disabled')).toBeDefined()
    await row(1).find('[data-testid=queued-up]').trigger('click')
    await row(0).find('[data-testid=queued-down]').trigger('click')
    expect(wrapper.emitted('move')).toEqual([['b', -1], ['a', 1]])
    await row(1).find('[data-testid=queued-send-now]').trigger('click')
    await row(0).find('[data-testid=queued-remove]').trigger('click')
    expect(wrapper.emitted('sendNow')).toEqual([['b']])
    expect(wrapper.emitted('remove')).toEqual([['a']])
    // Every button says what it does to a screen reader.
    for (const button of wrapper.findAll('button')) expect(button.attributes('aria-label') ?? button.text()).not.toBe('')
  })

  it('edits one in place: Enter saves the new text, Esc leaves it as it was', async () => {
    const wrapper = mount(QueuedMessages, { props: { running: true, items: [item('a', 'first')] }, attachTo: document.body })
    await wrapper.find('[data-testid=queued-edit]').trigger('click')
    await flushPromises()
    const field = wrapper.find('.queue__edit textarea')
    await field.setValue('first, better')
    await field.trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('edit')).toEqual([['a', 'first, better']])
    await wrapper.find('[data-testid=queued-edit]').trigger('click')
    await flushPromises()
    await wrapper.find('.queue__edit textarea').trigger('keydown', { key: 'Escape' })
    expect(wrapper.find('.queue__edit').exists()).toBe(false)
    expect(wrapper.emitted('edit')).toHaveLength(1)
    wrapper.unmount()
  })

  it('says when one was handed to the answer or could not start, and offers no changes to one handed over; a paused queue says so', () => {
    const wrapper = mount(QueuedMessages, { props: { running: false, items: [item('a', 'handed', { steerJobId: 'job-1' }), item('b', 'blocked', { blocked: 'Daily budget used up.' })] } })
    expect(wrapper.find('[role=status]').text()).toMatch(/paused: the last answer did not finish/)
    const handed = wrapper.find('[data-testid=queued-0]')
    expect(handed.find('[data-testid=queued-handed]').text()).toMatch(/Handed to the running answer/)
    expect(handed.find('[data-testid=queued-edit]').exists()).toBe(false)
    expect(handed.find('[data-testid=queued-send-now]').exists()).toBe(false)
    expect(wrapper.find('[data-testid=queued-1] [data-testid=queued-blocked]').text()).toBe('Could not start: Daily budget used up.')
  })

  it('shows nothing when the queue is empty', () => {
    expect(mount(QueuedMessages, { props: { running: true, items: [] } }).find('[data-testid=message-queue]').exists()).toBe(false)
  })
})

describe('an answer that was steered', () => {
  it('shows what the person sent it before the tool calls of the request that read it', () => {
    const wrapper = mount(ChatMessage, {
      props: {
        message: {
          id: 'a', role: 'assistant', content: 'Done.', status: 'complete',
          toolCalls: [{ id: 'c1', name: 'search', arguments: '{}', round: 1, status: 'completed' }, { id: 'c2', name: 'search', arguments: '{}', round: 2, status: 'completed' }],
          steers: [{ id: 's', content: 'only trains', round: 2, contentOffset: 0, at: 1 }],
        },
      },
      global: { stubs: { ToolCallCard: { props: ['call'], template: '<div data-testid="call">{{ call.id }}</div>' } } },
    })
    const order = wrapper.findAll('[data-testid=call], [data-testid=message-steer]').map(node => node.attributes('data-testid') === 'call' ? node.text() : 'steer')
    expect(order).toEqual(['c1', 'steer', 'c2'])
    expect(wrapper.find('[data-testid=message-steer]').text()).toBe('You, while it ran only trains')
  })
})

describe('reading an answer aloud', () => {
  it('speaks its words without its code in the app\'s language, stops on a second press, and is not offered without speech synthesis', async () => {
    const spoken: Array<{ text: string, lang: string }> = []
    const synthesis = { speak: vi.fn((utterance: { text: string, lang: string }) => spoken.push({ text: utterance.text, lang: utterance.lang })), cancel: vi.fn() }
    vi.stubGlobal('speechSynthesis', synthesis)
    vi.stubGlobal('SpeechSynthesisUtterance', class { lang = ''; onend?: () => void; onerror?: () => void; constructor(readonly text: string) {} })
    const content = '## Plan\n\nBoil the **water**.\n\n```python\nprint("not read")\n```\n\nThen [serve](https://example.com) it.'
    const wrapper = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content, status: 'complete' } } })
    await flushPromises()
    const button = wrapper.find('[data-testid=read-aloud]')
    expect(button.text()).toBe('Read aloud')
    await button.trigger('click')
    expect(spoken).toEqual([{ text: 'Plan Boil the water. Then serve it.', lang: 'en' }])
    expect(wrapper.find('[data-testid=read-aloud]').text()).toBe('Stop reading')
    expect(wrapper.find('[data-testid=read-aloud]').attributes('aria-pressed')).toBe('true')
    await wrapper.find('[data-testid=read-aloud]').trigger('click')
    expect(synthesis.cancel).toHaveBeenCalled()
    expect(wrapper.find('[data-testid=read-aloud]').text()).toBe('Read aloud')
    vi.unstubAllGlobals()
    const without = mount(ChatMessage, { props: { message: { id: 'b', role: 'assistant', content, status: 'complete' } } })
    await flushPromises()
    expect(without.find('[data-testid=read-aloud]').exists()).toBe(false)
  })
})
