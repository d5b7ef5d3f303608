/** Code blocks in answers: language bar, Copy, shiki highlighting in both themes, and code that stays text. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import MarkdownContent from '../../app/components/MarkdownContent.vue'
import { renderMarkdown } from '../../app/utils/markdown'
import { grammarOf, highlightCode, loadHighlighter, MAX_HIGHLIGHT_CHARS } from '../../app/utils/code-highlight'

afterEach(() => vi.unstubAllGlobals())

const TS_BLOCK = '```ts\nconst answer: number = 42 // the answer\n```'

describe('code blocks', () => {
  it('shows the language and a Copy button that copies the code as written', async () => {
    const writeText = vi.fn(async () => {})
    vi.stubGlobal('navigator', { clipboard: { writeText } })
    const wrapper = mount(MarkdownContent, { props: { text: `Here:\n\n${TS_BLOCK}` } })
    expect(wrapper.find('.code-block__lang').text()).toBe('ts')
    await wrapper.find('[data-copy-code]').trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith('const answer: number = 42 // the answer\n')
    expect(wrapper.find('[data-copy-code]').text()).toBe('Copied')
  })

  it('highlights with both themes\' colours once shiki has loaded, keeping the text', async () => {
    const wrapper = mount(MarkdownContent, { props: { text: TS_BLOCK } })
    await vi.waitFor(() => expect(wrapper.find('pre.shiki').exists()).toBe(true), { timeout: 10_000 })
    const keyword = wrapper.findAll('pre.shiki span').find(span => span.text() === 'const')!
    expect(keyword.attributes('style')).toMatch(/--shiki-light:#[0-9A-F]{6};--shiki-dark:#[0-9A-F]{6}/i)
    expect(wrapper.find('pre.shiki').text()).toBe('const answer: number = 42 // the answer')
  })

  it('keeps a script, HTML or a hostile language name in a code block as text, highlighted or not', async () => {
    const hostile = '```html"><img src=x onerror=alert(1)>\n<script>alert(1)</script>\n```'
    const plain = renderMarkdown(hostile)
    expect(plain).not.toMatch(/<script>|<img/)
    expect(plain).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    const highlighter = await loadHighlighter()
    const highlighted = highlightCode(highlighter, '<script>alert(1)</script>', 'html')!
    expect(highlighted).not.toContain('<script>')
    expect(renderMarkdown('```html\n<script>alert(1)</script>\n```', [], (code, info) => highlightCode(highlighter, code, info))).not.toContain('<script>')
  })

  it('leaves unknown languages and very long blocks plain', async () => {
    const highlighter = await loadHighlighter()
    expect(grammarOf('brainfuck')).toBeUndefined()
    expect(highlightCode(highlighter, '+++', 'brainfuck')).toBeUndefined()
    expect(highlightCode(highlighter, 'x'.repeat(MAX_HIGHLIGHT_CHARS + 1), 'ts')).toBeUndefined()
    expect(renderMarkdown('    indented code')).toContain('<span class="code-block__lang">text</span>')
  })
})

describe('math', () => {
  it('typesets inline and display math with KaTeX, and leaves prices alone', () => {
    const html = renderMarkdown('Euler: $e^{i\\pi} + 1 = 0$, and\n\n$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$\n\nIt costs $5 and $10.')
    expect(html).toContain('class="katex"')
    expect(html).toContain('katex-block')
    expect(html).toContain('<annotation encoding="application/x-tex">e^{i\\pi} + 1 = 0</annotation>')
    expect(html).toContain('It costs $5 and $10.')
  })

  it('runs nothing a formula asks for: no links, HTML or script, and long formulas stay source', async () => {
    const { MAX_FORMULA_CHARS } = await import('../../app/utils/markdown')
    const hostile = renderMarkdown('$\\href{javascript:alert(1)}{x}$ $\\htmlClass{evil}{y}$ $<script>alert(1)</script>$')
    expect(hostile).not.toMatch(/href="javascript|class="evil"|<script>/)
    const long = renderMarkdown(`$${'x+'.repeat(MAX_FORMULA_CHARS)}x$`)
    expect(long).toContain('class="math-source"')
    expect(long).not.toContain('class="katex"')
  })
})
