/** Message actions (copy), the composer's keys (Enter sends, Esc stops), and exporting a conversation. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import ChatMessage from '../../app/components/ChatMessage.vue'
import ChatComposer from '../../app/components/ChatComposer.vue'
import { exportFileName, threadJson, threadMarkdown } from '../../app/utils/thread-export'
import type { ThreadWithMessages } from '../../shared/types/thread'

afterEach(() => vi.unstubAllGlobals())

describe('copying a message', () => {
  it('puts the answer\'s Markdown on the clipboard and says so; not while it streams', async () => {
    const writeText = vi.fn(async () => {})
    vi.stubGlobal('navigator', { clipboard: { writeText } })
    const wrapper = mount(ChatMessage, { props: { message: { id: 'm', role: 'assistant', content: 'The answer is **42**.', status: 'complete' } } })
    await wrapper.find('[data-testid=copy-message]').trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith('The answer is **42**.')
    expect(wrapper.find('[data-testid=copy-message]').text()).toBe('Copied')
    const streaming = mount(ChatMessage, { props: { message: { id: 'm', role: 'assistant', content: 'The ans', status: 'streaming' } } })
    expect(streaming.find('[data-testid=copy-message]').exists()).toBe(false)
  })

  it('says when the clipboard refused', async () => {
    vi.stubGlobal('navigator', { clipboard: { writeText: async () => { throw new Error('denied') } } })
    const wrapper = mount(ChatMessage, { props: { message: { id: 'm', role: 'user', content: 'hello' } } })
    await wrapper.find('[data-testid=copy-message]').trigger('click')
    await flushPromises()
    expect(wrapper.find('[data-testid=copy-message]').text()).toBe('Could not copy')
  })
})

describe('what an answer used', () => {
  const usage = { promptTokens: 1_200, completionTokens: 34, totalTokens: 1_234, cachedTokens: 1_000, reasoningTokens: 0, cost: 0.00123 }

  it('says its tokens and cost under a finished answer of one\'s own, with the split in its title; not while it streams, nor where not asked', () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete', usage }, showUsage: true } })
    const line = wrapper.find('[data-testid=message-usage]')
    expect(line.text()).toBe('1,234 tokens · $0.0012')
    expect(line.attributes('title')).toBe('Tokens: 1,200 in (1,000 from cache), 34 out')
    const streaming = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '4', status: 'streaming', usage }, showUsage: true } })
    expect(streaming.find('[data-testid=message-usage]').exists()).toBe(false)
    const shared = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete', usage } } })
    expect(shared.find('[data-testid=message-usage]').exists()).toBe(false)
    const free = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete', usage: { ...usage, cost: 0 } }, showUsage: true } })
    expect(free.find('[data-testid=message-usage]').text()).toBe('1,234 tokens')
    const unreported = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete' }, showUsage: true } })
    expect(unreported.find('[data-testid=message-usage]').exists()).toBe(false)
  })
})

describe('regenerate, edit and versions', () => {
  it('answers again from an answer, only when the thread allows it and never while it streams', async () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete' }, canBranch: true } })
    await wrapper.find('[data-testid=regenerate]').trigger('click')
    expect(wrapper.emitted('regenerate')).toEqual([[]])
    expect(wrapper.find('[data-testid=edit-message]').exists()).toBe(false)
    // A failed answer without text can still be tried again.
    const failed = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '', status: 'error', error: { message: 'Rate limited' } }, canBranch: true } })
    expect(failed.find('[data-testid=regenerate]').exists()).toBe(true)
    const busy = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '42', status: 'complete' }, canBranch: false } })
    expect(busy.find('[data-testid=regenerate]').exists()).toBe(false)
    const streaming = mount(ChatMessage, { props: { message: { id: 'a', role: 'assistant', content: '4', status: 'streaming' }, canBranch: true } })
    expect(streaming.find('[data-testid=regenerate]').exists()).toBe(false)
  })

  it('edits a question in place: Enter sends the new text, Esc keeps the old one, an empty text is not sent', async () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: 'q', role: 'user', content: 'What is 6*7?' }, canBranch: true } })
    await wrapper.find('[data-testid=edit-message]').trigger('click')
    const field = wrapper.find('[data-testid=edit-form] textarea')
    expect((field.element as HTMLTextAreaElement).value).toBe('What is 6*7?')
    await field.setValue('   ')
    await wrapper.find('[data-testid=edit-form]').trigger('submit')
    expect(wrapper.emitted('edit')).toBeUndefined()
    await field.trigger('keydown', { key: 'Escape' })
    expect(wrapper.find('[data-testid=edit-form]').exists()).toBe(false)
    expect(wrapper.text()).toContain('What is 6*7?')
    await wrapper.find('[data-testid=edit-message]').trigger('click')
    await wrapper.find('[data-testid=edit-form] textarea').setValue('  What is 2+2? ')
    await wrapper.find('[data-testid=edit-form] textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('edit')).toEqual([['What is 2+2?']])
    expect(wrapper.find('[data-testid=edit-form]').exists()).toBe(false)
  })

  it('switches versions with ‹ and ›, which stop at the first and the last', async () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: 'b', role: 'assistant', content: 'Two', status: 'complete', versions: { ids: ['a', 'b', 'c'], index: 1 } } } })
    expect(wrapper.find('[data-testid=versions]').text()).toContain('2 / 3')
    await wrapper.find('[aria-label="Previous version"]').trigger('click')
    await wrapper.find('[aria-label="Next version"]').trigger('click')
    expect(wrapper.emitted('showVersion')).toEqual([['a'], ['c']])
    const first = mount(ChatMessage, { props: { message: { id: 'a', role: 'user', content: 'One', versions: { ids: ['a', 'b'], index: 0 } } } })
    expect(first.find('[aria-label="Previous version"]').attributes('disabled')).toBeDefined()
    expect(first.find('[aria-label="Next version"]').attributes('disabled')).toBeUndefined()
    // One version only: no switcher.
    expect(mount(ChatMessage, { props: { message: { id: 'x', role: 'user', content: 'x' } } }).find('[data-testid=versions]').exists()).toBe(false)
  })
})

describe('the composer', () => {
  it('sends on Enter, and stops a streaming answer on Esc without losing the draft', async () => {
    const wrapper = mount(ChatComposer, { props: { busy: false, modelValue: 'hello' } })
    await wrapper.find('textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('send')).toEqual([['hello', []]])
    await wrapper.find('textarea').trigger('keydown', { key: 'Escape' })
    expect(wrapper.emitted('stop')).toBeUndefined()
    await wrapper.setProps({ busy: true, modelValue: 'next question' })
    await wrapper.find('textarea').trigger('keydown', { key: 'Escape' })
    expect(wrapper.emitted('stop')).toEqual([[]])
    expect((wrapper.find('textarea').element as HTMLTextAreaElement).value).toBe('next question')
    // Enter while the answer runs sends nothing, keeps the draft and says why; the note goes when it ends.
    await wrapper.find('textarea').trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('send')).toHaveLength(1)
    expect(wrapper.find('[data-testid=composer-held]').text()).toMatch(/An answer is still running: your message stays here until it ends/)
    expect(wrapper.find('[data-testid=composer-held]').attributes('role')).toBe('status')
    expect((wrapper.find('textarea').element as HTMLTextAreaElement).value).toBe('next question')
    await wrapper.setProps({ busy: false })
    expect(wrapper.find('[data-testid=composer-held]').exists()).toBe(false)
  })
})

describe('# in the composer', () => {
  const bases = [{ id: 'kb-1', name: 'Handbook' }, { id: 'kb-2', name: 'Sales playbook' }, { id: 'kb-3', name: 'Hardware' }]

  it('offers the knowledge bases a #word matches, moves with the arrows, attaches with Enter and takes the #word out', async () => {
    const wrapper = mount(ChatComposer, { props: { busy: false, knowledgeBases: bases, modelValue: '' }, attachTo: document.body })
    const field = wrapper.find('textarea')
    const type = async (value: string) => {
      await wrapper.setProps({ modelValue: value })
      ;(field.element as HTMLTextAreaElement).setSelectionRange(value.length, value.length)
      await flushPromises()
    }
    await type('What does #ha')
    const options = () => wrapper.findAll('[data-testid=composer-knowledge] [role=option]').map(option => option.text())
    expect(options()).toEqual(['Handbook', 'Hardware'])
    expect(field.attributes('aria-controls')).toBe('composer-knowledge')
    expect(field.attributes('aria-activedescendant')).toBe('composer-knowledge-0')
    await field.trigger('keydown', { key: 'ArrowDown' })
    expect(field.attributes('aria-activedescendant')).toBe('composer-knowledge-1')
    await field.trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('attachKnowledge')).toEqual([['kb-3']])
    expect(wrapper.emitted('send')).toBeUndefined()
    expect(wrapper.emitted('update:modelValue')!.at(-1)).toEqual(['What does '])
    // Esc closes the list without stopping anything; a # inside a word, or with no match, offers nothing.
    await type('#sal')
    expect(options()).toEqual(['Sales playbook'])
    await field.trigger('keydown', { key: 'Escape' })
    await flushPromises()
    expect(options()).toEqual([])
    expect(wrapper.emitted('stop')).toBeUndefined()
    await type('C# code')
    expect(options()).toEqual([])
    await type('#zebra')
    expect(options()).toEqual([])
    await field.trigger('keydown', { key: 'Enter' })
    expect(wrapper.emitted('send')).toEqual([['#zebra', []]])
    wrapper.unmount()
  })
})

describe('attachments', () => {
  const rules = { maxFiles: 2, maxImageBytes: 1024, maxTextBytes: 512, types: 'image/png,image/jpeg,image/webp,image/gif,text/*' }
  const png = (name = 'photo.png', size = 100) => new File([new Uint8Array(size)], name, { type: 'image/png' })

  it('adds picked files with their sizes, refuses what cannot go saying why, and sends files without text', async () => {
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: () => 'blob:preview', revokeObjectURL: vi.fn() }))
    const wrapper = mount(ChatComposer, { props: { busy: false, attachments: rules, imagesAccepted: true } })
    const input = wrapper.find('[data-testid=composer-file-input]')
    expect(input.attributes('accept')).toContain('image/png')
    const pick = async (...files: File[]) => {
      Object.defineProperty(input.element, 'files', { value: files, configurable: true })
      await input.trigger('change')
    }
    await pick(new File(['<svg/>'], 'logo.svg', { type: 'image/svg+xml' }))
    expect(wrapper.find('[data-testid=composer-problem]').text()).toContain('SVG')
    await pick(png('huge.png', 5_000))
    expect(wrapper.find('[data-testid=composer-problem]').text()).toMatch(/"huge\.png" is 5 KB; images may be at most 1 KB/)
    await pick(png(), new File(['# notes'], 'notes.md', { type: 'text/markdown' }), png('third.png'))
    expect(wrapper.findAll('[data-testid=composer-files] li').map(item => item.text())).toEqual([expect.stringContaining('photo.png'), expect.stringContaining('notes.md')])
    expect(wrapper.find('[data-testid=composer-problem]').text()).toContain('at most 2 files')
    expect(wrapper.find('[data-testid=composer-files] img').attributes('src')).toBe('blob:preview')
    await wrapper.find('[aria-label="Remove notes.md"]').trigger('click')
    // Without `imagesAccepted` the composer takes images (a missing boolean prop would otherwise read as false).
    expect(wrapper.find('[data-testid=composer-problem]').exists()).toBe(false)
    expect(wrapper.findAll('[data-testid=composer-files] li')).toHaveLength(1)
    // Files alone can be sent.
    expect(wrapper.find('[data-testid=send-button]').attributes('disabled')).toBeUndefined()
    await wrapper.find('[data-testid=send-button]').trigger('click')
    const [[text, files]] = wrapper.emitted('send') as unknown as [[string, Array<{ file: File }>]]
    expect(text).toBe('')
    expect(files.map(pending => pending.file.name)).toEqual(['photo.png'])
    expect(wrapper.find('[data-testid=composer-files]').exists()).toBe(false)
  })

  it('sends files alone with Enter, once, and keeps the focus in the field on Esc (Nuxt UI\'s prompt would blur it)', async () => {
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: () => 'blob:preview', revokeObjectURL: vi.fn() }))
    const wrapper = mount(ChatComposer, { props: { busy: false, attachments: rules }, attachTo: document.body })
    const input = wrapper.find('[data-testid=composer-file-input]')
    Object.defineProperty(input.element, 'files', { value: [png()], configurable: true })
    await input.trigger('change')
    const field = wrapper.find('textarea')
    // Without `imagesAccepted` the composer takes images (a missing boolean prop would otherwise read as false).
    expect(wrapper.find('[data-testid=composer-problem]').exists()).toBe(false)
    expect(wrapper.findAll('[data-testid=composer-files] li')).toHaveLength(1)
    ;(field.element as HTMLTextAreaElement).focus()
    await field.trigger('keydown', { key: 'Escape' })
    expect(document.activeElement).toBe(field.element)
    await field.trigger('keydown', { key: 'Enter' })
    expect(wrapper.findAll('[data-testid=composer-files] li')).toHaveLength(0)
    expect(wrapper.emitted('send')).toHaveLength(1)
    expect((wrapper.emitted('send')![0] as [string, Array<{ file: File }>])[1].map(pending => pending.file.name)).toEqual(['photo.png'])
    wrapper.unmount()
  })

  it('refuses an image for a model that does not read images, and offers no attachments without limits', async () => {
    const { fileProblem } = await import('../../app/utils/attachments')
    expect(fileProblem(png(), 0, rules, false)).toMatch(/does not read images/)
    expect(fileProblem(new File(['x'], 'a.txt', { type: 'text/plain' }), 0, rules, false)).toBeUndefined()
    expect(fileProblem(new File(['x'], 'clip.mp4', { type: 'video/mp4' }), 0, rules, true)).toMatch(/attach PNG/)
    expect(fileProblem(new File(['x'], 'a.txt', { type: 'text/plain' }), 0, { ...rules, maxFiles: 0 }, true)).toMatch(/does not take attachments/)
    expect(mount(ChatComposer, { props: { busy: false } }).find('[data-testid=composer-file-input]').exists()).toBe(false)
  })

  it('takes an image picked while the models are still loading (whether the model reads images is not known yet)', async () => {
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: () => 'blob:preview', revokeObjectURL: vi.fn() }))
    const wrapper = mount(ChatComposer, { props: { busy: false, attachments: rules, imagesAccepted: undefined } })
    const input = wrapper.find('[data-testid=composer-file-input]')
    Object.defineProperty(input.element, 'files', { value: [png()], configurable: true })
    await input.trigger('change')
    expect(wrapper.find('[data-testid=composer-problem]').exists()).toBe(false)
    expect(wrapper.findAll('[data-testid=composer-files] li').map(item => item.text())).toEqual([expect.stringContaining('photo.png')])
  })

  it('shows a message\'s images as thumbnails and text files as named links to this app, names as text', () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: 'q', threadId: 't/1', role: 'user', content: '', attachments: [
      { id: 'img', name: '<img src=x onerror=alert(1)>.png', mediaType: 'image/png', kind: 'image', size: 2048 },
      { id: 'txt', name: 'notes.md', mediaType: 'text/markdown', kind: 'text', size: 300 },
    ] } } })
    const links = wrapper.findAll('[data-testid=message-files] a')
    expect(links.map(link => link.attributes('href'))).toEqual(['/api/threads/t%2F1/attachments/img', '/api/threads/t%2F1/attachments/txt'])
    expect(links[0]!.find('img').attributes('alt')).toBe('<img src=x onerror=alert(1)>.png')
    expect(wrapper.findAll('img')).toHaveLength(1)
    expect(links[1]!.text()).toContain('notes.md')
    expect(links[1]!.text()).toContain('300 B')
    expect(wrapper.find('.message__user-text').exists()).toBe(false)
  })
})

describe('exporting a conversation', () => {
  const conversation: ThreadWithMessages = {
    thread: { id: 't', userId: 'u', title: 'Tokyo time / <script>', createdAt: 1, updatedAt: 2 } as ThreadWithMessages['thread'],
    messages: [
      { id: '1', threadId: 't', role: 'user', content: 'What time is it in Tokyo?', createdAt: 1 },
      { id: '2', threadId: 't', role: 'assistant', content: 'It is **10:00**.', model: 'or3/offline-demo', createdAt: 2, status: 'complete', toolCalls: [{ id: 'c', name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}', round: 1, status: 'completed' }] },
      { id: '3', threadId: 't', role: 'assistant', content: '', createdAt: 3, status: 'error', error: { message: 'The model is rate-limited.' } },
    ],
  }

  it('writes Markdown with who said what, the tool calls and failures', () => {
    const markdown = threadMarkdown(conversation)
    expect(markdown).toMatch(/^# Tokyo time \/ <script>\n/)
    expect(markdown).toContain('## You\n\nWhat time is it in Tokyo?')
    expect(markdown).toContain('## Assistant (or3/offline-demo)\n\n> Tool `get_current_time`({"timezone":"Asia/Tokyo"}) → completed\n\nIt is **10:00**.')
    expect(markdown).toContain('_(failed: The model is rate-limited.)_')
  })

  it('writes JSON that reads back as the same conversation, under a safe file name', () => {
    const parsed = JSON.parse(threadJson(conversation))
    expect(parsed.messages).toEqual(conversation.messages)
    expect(parsed.thread.title).toBe('Tokyo time / <script>')
    expect(exportFileName('Tokyo time / <script>', 'md')).toBe('tokyo-time-script.md')
    expect(exportFileName('../../etc/passwd', 'json')).toBe('etcpasswd.json')
    expect(exportFileName('   ', 'json')).toBe('conversation.json')
  })
})

describe('search snippets', () => {
  it('marks the words that begin with a searched word, as text, without Markdown marks', async () => {
    const { highlightTerms } = await import('../../app/utils/highlight-terms')
    const pieces = highlightTerms('In **Asia/Tokyo** it is `10:00` <b>now</b>', 'tok asia')
    expect(pieces.filter(piece => piece.mark).map(piece => piece.text)).toEqual(['Asia', 'Tokyo'])
    expect(pieces.map(piece => piece.text).join('')).toBe('In Asia/Tokyo it is 10:00 <b>now</b>')
    expect(highlightTerms('Crème brûlée', 'creme').filter(piece => piece.mark).map(piece => piece.text)).toEqual(['Crème'])
  })
})

describe('rating an answer', () => {
  it('offers 👍 / 👎 on a finished answer only where rating is allowed; pressed again, a rating is taken back', async () => {
    const answer = { id: 'a', role: 'assistant' as const, content: '42', status: 'complete' as const }
    expect(mount(ChatMessage, { props: { message: answer } }).find('[data-testid=rate-up]').exists()).toBe(false)
    expect(mount(ChatMessage, { props: { message: { ...answer, status: 'streaming' as const }, canRate: true } }).find('[data-testid=rate-up]').exists()).toBe(false)
    expect(mount(ChatMessage, { props: { message: { id: 'q', role: 'user' as const, content: 'hi' }, canRate: true } }).find('[data-testid=rate-up]').exists()).toBe(false)
    const wrapper = mount(ChatMessage, { props: { message: answer, canRate: true } })
    await wrapper.find('[data-testid=rate-up]').trigger('click')
    expect(wrapper.emitted('rate')).toEqual([[{ rating: 'up' }]])
    const rated = mount(ChatMessage, { props: { message: { ...answer, feedback: { rating: 'up' as const, at: 1 } }, canRate: true } })
    expect(rated.find('[data-testid=rate-up]').attributes('aria-pressed')).toBe('true')
    await rated.find('[data-testid=rate-up]').trigger('click')
    expect(rated.emitted('rate')).toEqual([[null]])
    const down = mount(ChatMessage, { props: { message: { ...answer, feedback: { rating: 'down' as const, reason: 'Too long', at: 1 } }, canRate: true } })
    await down.find('[data-testid=rate-down]').trigger('click')
    expect(down.emitted('rate')).toEqual([[null]])
  })
})
