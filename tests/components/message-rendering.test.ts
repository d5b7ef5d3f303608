/// <reference lib="dom" />
import { mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import ChatMessage from '../../app/components/ChatMessage.vue'
import MarkdownContent from '../../app/components/MarkdownContent.vue'
import { markdownBlocks, renderMarkdown, renderMarkdownBlocks } from '../../app/utils/markdown'

describe('markdown rendering', () => {
  it('renders code blocks, lists and tables', () => {
    const html = renderMarkdown('Intro\n\n```ts\nconst a = 1 < 2\n```\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |')
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2\n</code></pre>')
    expect(html).toContain('<li>one</li>')
    expect(html).toContain('<table>')
    expect(html).toContain('<td>2</td>')
  })

  it('shows raw HTML as text: an <img onerror> payload becomes harmless characters', () => {
    const wrapper = mount(MarkdownContent, { props: { text: 'look <img src=x onerror=alert(1)> here <script>alert(2)</script>' } })
    expect(wrapper.find('img').exists()).toBe(false)
    expect(wrapper.find('script').exists()).toBe(false)
    expect(wrapper.text()).toContain('<img src=x onerror=alert(1)>')
    expect(wrapper.html()).toContain('&lt;img src=x onerror=alert(1)&gt;')
  })

  it('refuses javascript:, vbscript: and data: links, and opens safe links in a new tab without opener', () => {
    const wrapper = mount(MarkdownContent, { props: { text: '[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](vbscript:x) [d](data:text/html;base64,PHNjcmlwdD4=) [ok](https://example.com)' } })
    const links = wrapper.findAll('a')
    expect(links.map(link => link.attributes('href'))).toEqual(['https://example.com'])
    expect(links[0]!.attributes('target')).toBe('_blank')
    expect(links[0]!.attributes('rel')).toBe('noopener noreferrer nofollow')
    expect(wrapper.text()).toContain('[a](javascript:alert(1))')
  })

  it('links only what says it is a link: file and host names without a scheme stay text', () => {
    const html = renderMarkdown('I saved todo.md and app.py; see example.com, https://example.org/docs or write to team@example.com.')
    expect([...html.matchAll(/href="([^"]+)"/g)].map(match => match[1])).toEqual(['https://example.org/docs', 'mailto:team@example.com'])
    expect(html).toContain('I saved todo.md and app.py; see example.com,')
  })
})

describe('an answer rendered block by block (what a streaming answer re-renders)', () => {
  const documents = [
    'Intro line one\nline two\n\n```ts\nconst a = 1 < 2\n\nconst b = 3\n```\n\n- one\n\n- two, loose\n   continued\n\n3. three\n4. four\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n>\n> twice\n\nTitle\n---\n\n## Heading\n***\n    indented code\n\nend',
    'See [the docs][d] and [more][m].\n\nLater [d].\n\n[d]: https://example.com/docs "Docs"\n[m]: https://example.org',
    'crlf\r\nline\r\n\r\nnext\0 block',
    '',
  ]

  it('splits where the block parser ends a block, and renders to what the whole text renders to', () => {
    expect(markdownBlocks(documents[0]!).blocks.map(block => block.split('\n')[0])).toEqual(['Intro line one', '```ts', '- one', '3. three', '| a | b |', '> quoted', 'Title', '## Heading', '***', '    indented code', 'end'])
    for (const text of documents) expect(renderMarkdownBlocks(text, new Map()).join(''), JSON.stringify(text.slice(0, 20))).toBe(renderMarkdown(text))
  })

  it('renders a block once while the text after it grows, and forgets blocks that are gone', () => {
    const highlighted: string[] = []
    const highlight = (code: string) => {
      highlighted.push(code)
      return `<pre class="shiki">${code}</pre>`
    }
    const rendered = new Map<string, string>()
    const answer = 'Here is code:\n\n```js\nlet x = 1\n```\n\nAnd then some words'
    const first = renderMarkdownBlocks(answer.slice(0, -6), rendered, [], highlight)
    const next = renderMarkdownBlocks(answer, rendered, [], highlight)
    expect(highlighted).toEqual(['let x = 1\n'])
    expect(next.slice(0, 2)).toEqual(first.slice(0, 2))
    expect(next[2]).toContain('And then some words')
    expect([...rendered.keys()]).toEqual(['Here is code:', '```js\nlet x = 1\n```', 'And then some words'])
    renderMarkdownBlocks('Something else', rendered, [], highlight)
    expect([...rendered.keys()]).toEqual(['Something else'])
  })

  it('keeps the elements of the blocks before the one that changes', async () => {
    const wrapper = mount(MarkdownContent, { props: { text: '# Title\n\nFirst paragraph.\n\nSecond' } })
    const heading = wrapper.find('h1').element
    const paragraph = wrapper.findAll('p')[0]!.element
    await wrapper.setProps({ text: '# Title\n\nFirst paragraph.\n\nSecond, and more of it' })
    expect(wrapper.find('h1').element).toBe(heading)
    expect(wrapper.findAll('p')[0]!.element).toBe(paragraph)
    expect(wrapper.findAll('p')[1]!.text()).toBe('Second, and more of it')
    expect(wrapper.text()).toContain('First paragraph.')
  })
})

describe('ChatMessage', () => {
  it('shows a user message as plain text, never as markup', () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: '1', role: 'user', content: '<b>bold?</b> **no**' } } })
    expect(wrapper.find('b').exists()).toBe(false)
    expect(wrapper.find('.message__user-text').text()).toBe('<b>bold?</b> **no**')
  })

  it('shows an answer\'s tool cards in call order, reasoning collapsed, then the markdown text', () => {
    const wrapper = mount(ChatMessage, {
      props: {
        message: {
          id: '2',
          role: 'assistant',
          status: 'complete',
          content: 'It is **5**.',
          reasoning: 'Add them up.',
          toolCalls: [
            { id: 'b', name: 'calculate', arguments: '{"expression":"2+3"}', round: 1, status: 'completed', result: '5', executionTimeMs: 4 },
            { id: 'a', name: 'get_current_time', arguments: '{}', round: 2, status: 'running' },
          ],
        },
      },
    })
    expect(wrapper.findAll('[data-testid=tool-card]').map(card => card.attributes('data-tool'))).toEqual(['calculate', 'get_current_time'])
    // A finished answer's reasoning is kept, closed (Nuxt UI's reasoning: "Thought…", opened on a click).
    const reasoning = wrapper.find('[data-testid=reasoning]')
    expect(reasoning.exists()).toBe(true)
    expect(reasoning.attributes('data-state')).toBe('closed')
    expect(reasoning.text()).toMatch(/Thought/)
    expect(wrapper.find('[data-testid=message-content] strong').text()).toBe('5')
    expect(wrapper.find('[data-testid=message-outcome]').exists()).toBe(false)
  })

  it('shows the reasoning open while the model thinks, closed once the answer text begins', async () => {
    vi.useFakeTimers()
    const message = { id: 'm', role: 'assistant' as const, status: 'streaming' as const, content: '', reasoning: 'Compare the two numbers…' }
    const wrapper = mount(ChatMessage, { props: { message } })
    const reasoning = () => wrapper.find('[data-testid=reasoning]')
    expect(reasoning().attributes('data-state')).toBe('open')
    expect(reasoning().text()).toContain('Compare the two numbers…')
    await wrapper.setProps({ message: { ...message, content: 'The first is larger.' } })
    await vi.runAllTimersAsync()
    expect(reasoning().attributes('data-state')).toBe('closed')
    vi.useRealTimers()
  })

  it.each([
    [{ status: 'error', error: { message: 'OpenRouter: insufficient credits (402)', status: 402 } }, /insufficient credits.*Add credits.*offline demo model/],
    [{ status: 'error', error: { message: 'OpenRouter: rate limited (429)', status: 429 } }, /rate-limited; wait a moment/],
    [{ status: 'error', error: { message: 'The key was rejected (401)', status: 401 } }, /Check the API key in Settings/],
    [{ status: 'complete', finishReason: 'tool_limit' }, /limit of tool rounds/],
    [{ status: 'aborted' }, /Stopped/],
  ])('says in plain words what happened and what to do: %o', (outcome, expected) => {
    const wrapper = mount(ChatMessage, { props: { message: { id: '3', role: 'assistant', content: 'partial', ...outcome } as any } })
    expect(wrapper.find('[data-testid=message-outcome]').text()).toMatch(expected)
  })

  it('shows "Thinking…" and marks itself busy while an answer has not produced anything yet', () => {
    const wrapper = mount(ChatMessage, { props: { message: { id: '4', role: 'assistant', content: '', status: 'streaming' } } })
    expect(wrapper.text()).toContain('Thinking…')
    expect(wrapper.find('article').attributes('aria-busy')).toBe('true')
  })
})

describe('images in answers', () => {
  it('shows only this app\'s, data: and allowed hosts\' images inline; any other becomes a link naming its host', () => {
    const html = renderMarkdown('![own](/logo.svg) ![inline](data:image/png;base64,iVBORw0KGgo=) ![ok](https://images.example.com/a.png) ![leak](https://exfil.example/p.png?d=secret "t")', ['https://images.example.com'])
    const root = document.createElement('div')
    root.innerHTML = html
    expect([...root.querySelectorAll('img')].map(image => image.getAttribute('src'))).toEqual(['/logo.svg', 'data:image/png;base64,iVBORw0KGgo=', 'https://images.example.com/a.png'])
    const blocked = root.querySelector('a.blocked-image')!
    expect(blocked.getAttribute('href')).toBe('https://exfil.example/p.png?d=secret')
    expect(blocked.getAttribute('rel')).toBe('noopener noreferrer nofollow')
    expect(blocked.textContent).toContain('leak (image from https://exfil.example, not loaded)')
  })

  it('does not treat a protocol-relative or look-alike host as allowed', () => {
    const html = renderMarkdown('![a](//images.example.com/a.png) ![b](https://images.example.com.evil.example/b.png)', ['https://images.example.com'])
    expect(html).not.toContain('<img')
  })
})

describe('errors in plain words', () => {
  it('says the server could not be reached instead of the fetch library text, and keeps the server messages', async () => {
    const { errorMessage } = await import('../../app/utils/http-error')
    const noResponse = Object.assign(new Error('[POST] "/api/threads": <no response> Failed to fetch'), { statusCode: undefined })
    expect(errorMessage(noResponse)).toMatch(/could not be reached — your message is kept/)
    const refused = Object.assign(new Error('[POST] "/api/threads/x/messages": 429'), { statusCode: 429, response: {}, data: { message: 'You have 2 answers running; wait for one to finish.' } })
    expect(errorMessage(refused)).toBe('You have 2 answers running; wait for one to finish.')
  })
})
