/** Code blocks in answers: language bar, Copy, shiki highlighting in both themes, and code that stays text. */
import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import MarkdownContent from '../../app/components/MarkdownContent.vue'
import { isMathLoaded, loadMath, mayHoldMath, renderMarkdown } from '../../app/utils/markdown'
import { grammarOf, grammarsIn, highlightCode, loadHighlighter, MAX_HIGHLIGHT_CHARS } from '../../app/utils/code-highlight'

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
    const highlighter = await loadHighlighter(['html'])
    const highlighted = highlightCode(highlighter, '<script>alert(1)</script>', 'html')!
    expect(highlighted).not.toContain('<script>')
    expect(renderMarkdown('```html\n<script>alert(1)</script>\n```', [], (code, info) => highlightCode(highlighter, code, info))).not.toContain('<script>')
  })

  it('fetches only the grammars the page\'s blocks are written in', async () => {
    expect(grammarsIn('a\n```ts\nx\n```\n~~~ python3\n```py\ny\n```\n  ```TSX {1}\n```brainfuck\n')).toEqual(['typescript', 'python', 'tsx'])
    expect(grammarsIn('inline ```ts``` is not a fence, nor is text')).toEqual([])
    const highlighter = await loadHighlighter(['python'])
    expect(highlighter.getLoadedLanguages()).toContain('python')
    expect(highlighter.getLoadedLanguages()).not.toContain('rust')
    // Asked for a grammar not loaded yet: plain until it arrives.
    expect(highlightCode(highlighter, 'fn main() {}', 'rust')).toBeUndefined()
    await loadHighlighter(['rust'])
    expect(highlightCode(highlighter, 'fn main() {}', 'rust')).toContain('class="shiki')
  })

  it('leaves unknown languages and very long blocks plain', async () => {
    const highlighter = await loadHighlighter(['typescript'])
    expect(grammarOf('brainfuck')).toBeUndefined()
    expect(highlightCode(highlighter, '+++', 'brainfuck')).toBeUndefined()
    expect(highlightCode(highlighter, 'x'.repeat(MAX_HIGHLIGHT_CHARS + 1), 'ts')).toBeUndefined()
    expect(renderMarkdown('    indented code')).toContain('<span class="code-block__lang">text</span>')
  })
})

describe('math, loaded when a message needs it', () => {
  it('tells text that may hold a formula from text that does not, without loading KaTeX', async () => {
    const math = ['$x$', 'Euler: $e^{i\\pi} + 1 = 0$.', '$$\n\\int_0^1 x\\,dx\n$$', 'so $2^{10}$ is 1024', '($a+b$)']
    const none = ['no money here', 'It costs $5 and $10.', 'a $ sign', '$ x $', 'pay $5', `${'$a '.repeat(5_000)}`, 'USD$5 and $6']
    for (const text of math) expect(mayHoldMath(text), text).toBe(true)
    for (const text of none) expect(mayHoldMath(text), text.slice(0, 40)).toBe(false)
    // Not loaded yet: a formula shows as its source, and nothing of KaTeX is on the page.
    expect(isMathLoaded()).toBe(false)
    expect(renderMarkdown('Euler: $e^{i\\pi} + 1 = 0$')).toContain('$e^{i\\pi} + 1 = 0$')
    const plain = mount(MarkdownContent, { props: { text: 'It costs $5 and $10.' } })
    await flushPromises()
    expect(isMathLoaded()).toBe(false)
    // A message with math loads it once, and renders again typeset.
    const wrapper = mount(MarkdownContent, { props: { text: 'Euler: $e^{i\\pi} + 1 = 0$' } })
    expect(wrapper.html()).not.toContain('class="katex"')
    await vi.waitFor(() => expect(wrapper.html()).toContain('class="katex"'), { timeout: 30_000 })
    expect(isMathLoaded()).toBe(true)
    plain.unmount()
    wrapper.unmount()
  })
})

describe('math', () => {
  beforeAll(() => loadMath())

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
