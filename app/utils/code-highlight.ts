/**
 * Syntax highlighting of code blocks in answers, with shiki (the grammars and themes VS Code uses),
 * loaded on first use in the browser only: the core, the JavaScript regex engine (no WebAssembly),
 * two themes (light and dark, switched by CSS variables) and the common languages. Blocks past
 * `MAX_HIGHLIGHT_CHARS` or in another language stay plain (still escaped) text. Results are kept in
 * a small cache so a streaming answer re-highlights only the block that grows.
 */
import type { HighlighterCore } from 'shiki/core'

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

let loading: Promise<HighlighterCore> | undefined
const cache = new Map<string, string>()

/** The highlighter, loading it the first time (resolves in the browser; its modules are fetched lazily). */
export function loadHighlighter(): Promise<HighlighterCore> {
  loading ??= (async () => {
    const [{ createHighlighterCore }, { createJavaScriptRegexEngine }] = await Promise.all([import('shiki/core'), import('shiki/engine/javascript')])
    return createHighlighterCore({
      themes: [import('@shikijs/themes/github-light-default'), import('@shikijs/themes/github-dark-default')],
      langs: [
        import('@shikijs/langs/typescript'), import('@shikijs/langs/tsx'), import('@shikijs/langs/javascript'), import('@shikijs/langs/jsx'),
        import('@shikijs/langs/json'), import('@shikijs/langs/bash'), import('@shikijs/langs/python'), import('@shikijs/langs/html'),
        import('@shikijs/langs/css'), import('@shikijs/langs/vue'), import('@shikijs/langs/sql'), import('@shikijs/langs/yaml'),
        import('@shikijs/langs/markdown'), import('@shikijs/langs/diff'), import('@shikijs/langs/go'), import('@shikijs/langs/rust'),
        import('@shikijs/langs/java'), import('@shikijs/langs/c'), import('@shikijs/langs/cpp'), import('@shikijs/langs/csharp'),
        import('@shikijs/langs/php'), import('@shikijs/langs/ruby'), import('@shikijs/langs/toml'), import('@shikijs/langs/docker'),
      ],
      engine: createJavaScriptRegexEngine(),
    })
  })()
  return loading
}

/**
 * `code` as highlighted HTML (`<pre class="shiki">…`, colours as CSS variables for both themes),
 * or undefined when it is not highlighted (unknown language, too long, highlighter not loaded).
 * shiki escapes the code; the styles come from the themes, never from the text.
 */
export function highlightCode(highlighter: HighlighterCore | undefined, code: string, info: string): string | undefined {
  const lang = grammarOf(info)
  if (!highlighter || !lang || code.length > MAX_HIGHLIGHT_CHARS) return undefined
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
