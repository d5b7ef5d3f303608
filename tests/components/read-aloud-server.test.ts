/** Read aloud by the server's speech model: an answer read in parts, the next asked for while one plays; the browser's voice reads the rest when the server fails; and images an answer made, shown under the call that made them. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import ChatMessage from '../../app/components/ChatMessage.vue'
import { speechParts } from '../../app/utils/plain-text'

/** A stand-in for HTMLAudioElement that "plays" until the test ends it. */
class FakeAudio {
  static playing: FakeAudio[] = []
  src = ''
  paused = true
  onended: ((event: Event) => void) | null = null
  onerror: ((event: Event) => void) | null = null
  play() {
    this.paused = false
    FakeAudio.playing.push(this)
    return Promise.resolve()
  }

  pause() {
    this.paused = true
  }

  finish() {
    this.onended?.(new Event('ended'))
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
  FakeAudio.playing = []
})

describe('speech parts', () => {
  it('cuts at sentence ends where one fits, else at a space, else hard; never an empty part', () => {
    expect(speechParts('One. Two three. Four five six.', 16)).toEqual(['One. Two three.', 'Four five six.'])
    expect(speechParts('aaaa bbbb cccc', 8)).toEqual(['aaaa', 'bbbb', 'cccc'])
    expect(speechParts('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)])
    expect(speechParts('   ', 10)).toEqual([])
  })
})

describe('read aloud by the server', () => {
  it('reads an answer part by part through /api/voice/speech, and the browser\'s voice reads the rest when a part fails', async () => {
    const posted: string[] = []
    let failFrom = Infinity
    vi.stubGlobal('$fetch', vi.fn(async (url: string, options?: { method?: string, body?: { text: string } }) => {
      if (!options?.method) return { available: true, chars: 30 }
      posted.push(options.body!.text)
      if (posted.length >= failFrom) throw new Error('429')
      return new Blob(['wav'], { type: 'audio/wav' })
    }))
    vi.stubGlobal('Audio', FakeAudio)
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: () => 'blob:part', revokeObjectURL: () => {} }))
    const spoken: string[] = []
    vi.stubGlobal('speechSynthesis', { speak: (utterance: { text: string }) => spoken.push(utterance.text), cancel: () => {} })
    vi.stubGlobal('SpeechSynthesisUtterance', class { lang = ''; constructor(readonly text: string) {} })
    const content = 'The kettle boils fast. Pour the water slowly. Wait three minutes. Then drink it.'
    const wrapper = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content, status: 'complete' } } })
    await flushPromises()
    await wrapper.find('[data-testid=read-aloud]').trigger('click')
    await flushPromises()
    // The first part plays while the second is asked for.
    expect(posted).toEqual(['The kettle boils fast.', 'Pour the water slowly.'])
    expect(FakeAudio.playing).toHaveLength(1)
    failFrom = 3
    FakeAudio.playing[0]!.finish()
    await flushPromises()
    // The third part fails: the browser reads from there on, and nothing is read twice.
    expect(posted).toEqual(['The kettle boils fast.', 'Pour the water slowly.', 'Wait three minutes.'])
    FakeAudio.playing[1]!.finish()
    await flushPromises()
    expect(spoken).toEqual(['Wait three minutes. Then drink it.'])
  })
})

describe('images an answer made', () => {
  it('are shown under the generate_image call that made them, not again above the answer; a share (no calls) shows them above', async () => {
    const result = JSON.stringify({ images: [{ id: 'img_1', name: 'sunset.png', mediaType: 'image/png', kind: 'image', size: 10 }], prompt: 'a sunset over the sea' })
    const attachments = [{ id: 'img_1', name: 'sunset.png', mediaType: 'image/png', kind: 'image' as const, size: 10 }]
    const wrapper = mount(ChatMessage, {
      props: { message: { id: 'a', threadId: 't1', role: 'assistant', content: 'Here it is.', status: 'complete', attachments, toolCalls: [{ id: 'c1', name: 'generate_image', arguments: '{}', round: 1, status: 'completed', result }] } },
      global: { stubs: { ToolCallCard: { template: '<div />' } } },
    })
    const image = wrapper.find('[data-testid=made-image]')
    expect(image.attributes('src')).toBe('/api/threads/t1/attachments/img_1')
    expect(image.attributes('alt')).toBe('a sunset over the sea')
    expect(wrapper.find('[data-testid=message-files]').exists()).toBe(false)
    const shared = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: 'Here it is.', status: 'complete', attachments }, filesAt: '/api/shared/tok/attachments' } })
    expect(shared.find('[data-testid=message-files] img').attributes('src')).toBe('/api/shared/tok/attachments/img_1')
  })
})
