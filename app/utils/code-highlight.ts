/**
 * Syntax highlighting of code blocks in answers, with shiki (the grammars and themes VS Code uses),
 * loaded on first use in the browser only: the core, the JavaScript regex engine (no WebAssembly)
 * and two themes (light and dark, switched by CSS variables), then each language's grammar the first
 * time a block on the page is written in it (a TypeScript answer fetches TypeScript, not 24
 * grammars). Blocks past `MAX_HIGHLIGHT_CHARS` or in another language stay plain (still escaped)
 * text. Results are kept in a small cache so a streaming answer re-highlights only the block that grows.
 */
import type { HighlighterCore, LanguageInput } from 'shiki/core'

/** Longest block highlighted; longer ones are shown plain (highlighting runs on the page's thread). */
export const MAX_HIGHLIGHT_CHARS = 20_000

/** What people write after the fence → the grammar's name. */
const LANGUAGE_ALIASES: Record<string, string> = {
  ts: 'typescript', typescript: 'typescript', tsx: 'tsx', js: 'javascript', javascript: 'javascript', jsx: 'jsx', mjs: 'javascript', cjs: 'javascript',
  json: 'json', jsonc: 'json', sh: 'bash', bash: 'bash', shell: 'bash', zsh: 'bash', console: 'bash',
  py: 'python', python: 'python', html: 'html', xml: 'html', css: 'css', scss: 'css', vue: 'vue', sql: 'sql',
  yaml: 'yaml', yml: 'yaml', md: 'markdown', markdown: 'markdown', diff: 'diff', go: 'go', rust: 'rust', rs: 'rust',
  java: 'java', c: 'c', h: 'c', cpp: 'cpp', 'c++': 'cpp', cs: 'csharp', csharp: 'csharp', php: 'php', ruby: 'ruby', rb: 'ruby',
  toml: 'toml', dockerfile: 'docker', docker: 'docker',
}

/** The grammar for a fence's info string, if it is one we highlight. */
export function grammarOf(info: string): string | undefined {
  return LANGUAGE_ALIASES[info.trim().split(/\s+/)[0]?.toLowerCase() ?? '']
}

/** Each grammar's module, fetched the first time a block needs it (one chunk per language). */
const GRAMMARS: Record<string, () => LanguageInput> = {
  typescript: () => import('@shikijs/langs/typescript'), tsx: () => import('@shikijs/langs/tsx'),
  javascript: () => import('@shikijs/langs/javascript'), jsx: () => import('@shikijs/langs/jsx'),
  json: () => import('@shikijs/langs/json'), bash: () => import('@shikijs/langs/bash'),
  python: () => import('@shikijs/langs/python'), html: () => import('@shikijs/langs/html'),
  css: () => import('@shikijs/langs/css'), vue: () => import('@shikijs/langs/vue'),
  sql: () => import('@shikijs/langs/sql'), yaml: () => import('@shikijs/langs/yaml'),
  markdown: () => import('@shikijs/langs/markdown'), diff: () => import('@shikijs/langs/diff'),
  go: () => import('@shikijs/langs/go'), rust: () => import('@shikijs/langs/rust'),
  java: () => import('@shikijs/langs/java'), c: () => import('@shikijs/langs/c'),
  cpp: () => import('@shikijs/langs/cpp'), csharp: () => import('@shikijs/langs/csharp'),
  php: () => import('@shikijs/langs/php'), ruby: () => import('@shikijs/langs/ruby'),
  toml: () => import('@shikijs/langs/toml'), docker: () => import('@shikijs/langs/docker'),
}

/** The grammars the fenced code blocks of `text` are written in (known ones only), each once. */
export function grammarsIn(text: string): string[] {
  const found = new Set<string>()
  // A fence at a line start, then its info string: one linear scan of the text.
  for (const match of text.matchAll(/(?:^|\n) {0,3}(?:```|~~~)[ \t]*([^\s`~]{1,30})/g)) {
    const grammar = grammarOf(match[1]!)
    if (grammar) found.add(grammar)
  }
  return [...found]
}

let loading: Promise<HighlighterCore> | undefined
const grammarLoads = new Map<string, Promise<void>>()
const cache = new Map<string, string>()

/**
 * The highlighter with `grammars` ready, loading the core the first time and each grammar the
 * first time it is asked for (in the browser; every module is fetched lazily). Later calls share
 * the loads already made.
 */
export async function loadHighlighter(grammars: readonly string[]): Promise<HighlighterCore> {
  loading ??= (async () => {
    const [{ createHighlighterCore }, { createJavaScriptRegexEngine }] = await Promise.all([import('shiki/core'), import('shiki/engine/javascript')])
    return createHighlighterCore({
      themes: [import('@shikijs/themes/github-light-default'), import('@shikijs/themes/github-dark-default')],
      langs: [],
      engine: createJavaScriptRegexEngine(),
    })
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  const highlighter = await loading
  await Promise.all(grammars.filter(grammar => grammar in GRAMMARS).map((grammar) => {
    let load = grammarLoads.get(grammar)
    if (!load) {
      load = highlighter.loadLanguage(GRAMMARS[grammar]!()).catch((error: unknown) => {
        grammarLoads.delete(grammar)
        throw error
      })
      grammarLoads.set(grammar, load)
    }
    return load
  }))
  return highlighter
}

/**
 * `code` as highlighted HTML (`<pre class="shiki">…`, colours as CSS variables for both themes),
 * or undefined when it is not highlighted (unknown language, too long, highlighter or grammar not loaded).
 * shiki escapes the code; the styles come from the themes, never from the text.
 */
export function highlightCode(highlighter: HighlighterCore | undefined, code: string, info: string): string | undefined {
  const lang = grammarOf(info)
  if (!highlighter || !lang || code.length > MAX_HIGHLIGHT_CHARS || !highlighter.getLoadedLanguages().includes(lang)) return undefined
  const key = `${lang}\u0000${code}`
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  let html: string
  try {
    html = highlighter.codeToHtml(code, { lang, themes: { light: 'github-light-default', dark: 'github-dark-default' }, defaultColor: false })
  } catch {
    return undefined
  }
  if (cache.size >= 100) cache.delete(cache.keys().next().value!)
  cache.set(key, html)
  return html
}
