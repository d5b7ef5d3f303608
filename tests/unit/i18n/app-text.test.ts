/**
 * Everything the app shows comes from a locale file: no component template holds words of its own
 * (text, or a label, placeholder, title or accessible name), no component script puts a sentence
 * in a toast, label or title, and every key the app asks for exists in English (a typo would show
 * the key itself).
 */
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parse, type ElementNode, type TemplateChildNode } from '@vue/compiler-dom'
import { parse as parseSfc } from '@vue/compiler-sfc'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const appFiles = execFileSync('git', ['ls-files', 'app'], { cwd: root, encoding: 'utf8' }).split('\n').filter(file => /\.(vue|ts)$/.test(file))
const vueFiles = appFiles.filter(file => file.endsWith('.vue'))
/** Files whose sentences are for the model, not a person: the browser tools' declarations (English, like every tool's). */
const FOR_THE_MODEL = new Set(['app/utils/client-tools.ts'])
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8')

/** Attributes a person reads or hears. */
const READ_ATTRIBUTES = new Set(['label', 'placeholder', 'title', 'aria-label', 'aria-description', 'description', 'help', 'hint', 'alt', 'data-label', 'text', 'heading', 'message'])
/** Words that are the same in every language: the app's name, formats and code. */
const NOT_WORDS = new Set(['OR3 Chat', 'Markdown', 'JSON', 'MCP ·', 'sk-or-v1-…', 'npm run restore', 'propose_tool', 'webhook-id', '/metrics', '{"prompt": "…"}', '<server>__<tool>', 'Authorization: Bearer <token>'])
/** Elements whose text is code, not words. */
const CODE_ELEMENTS = new Set(['code', 'pre', 'kbd', 'samp'])

const hasWords = (text: string) => /\p{L}{2,}/u.test(text.replace(/\{\{.*?\}\}/gs, ''))

function literalTexts(source: string): string[] {
  const { descriptor } = parseSfc(source)
  if (!descriptor.template) return []
  const found: string[] = []
  const walk = (node: TemplateChildNode | ElementNode, inCode: boolean): void => {
    if (node.type === 2 && !inCode) {
      const text = node.content.trim()
      if (hasWords(text) && !NOT_WORDS.has(text)) found.push(`text "${text}"`)
    }
    if (node.type === 1) {
      for (const prop of node.props) {
        if (prop.type === 6 && READ_ATTRIBUTES.has(prop.name) && prop.value && hasWords(prop.value.content) && !NOT_WORDS.has(prop.value.content)) found.push(`${prop.name}="${prop.value.content}"`)
      }
      const code = inCode || CODE_ELEMENTS.has(node.tag)
      for (const child of node.children) walk(child, code)
    }
    if ('branches' in node) for (const branch of (node as unknown as { branches: Array<{ children: TemplateChildNode[] }> }).branches) for (const child of branch.children) walk(child, inCode)
  }
  for (const child of parse(descriptor.template.content).children) walk(child, false)
  return found
}

/** Sentences a script puts where a person reads them: a toast's title or body, a label, a title… */
function scriptSentences(source: string): string[] {
  const script = source.includes('<script') ? (parseSfc(source).descriptor.scriptSetup?.content ?? '') + (parseSfc(source).descriptor.script?.content ?? '') : source
  const found: string[] = []
  for (const match of script.matchAll(/\b(title|body|label|description|placeholder|suffix|heading)\s*:\s*(['`])((?:(?!\2)[^\\]|\\.)*)\2/g)) {
    const text = match[3]!.replace(/\$\{[^}]*\}/g, '')
    if (/\p{L}+[ ’']\p{L}+/u.test(text)) found.push(`${match[1]}: ${match[2]}${match[3]}${match[2]}`)
  }
  for (const match of script.matchAll(/window\.confirm\(\s*(['`])/g)) found.push(`window.confirm(${match[1]}…`)
  return found
}

function englishKeys(): Set<string> {
  const keys = new Set<string>()
  const walk = (node: unknown, prefix: string): void => {
    if (node && typeof node === 'object') {
      keys.add(prefix.slice(0, -1))
      for (const [key, value] of Object.entries(node)) walk(value, `${prefix}${key}.`)
    } else keys.add(prefix.slice(0, -1))
  }
  walk(JSON.parse(read('i18n/locales/en.json')), '')
  return keys
}

describe('the app\'s text', () => {
  it('has no words of its own in a component template', () => {
    const found = vueFiles.flatMap(file => literalTexts(read(file)).map(text => `${file}: ${text}`))
    expect(found).toEqual([])
  })

  it('puts no sentence of its own into a toast, label, title or confirmation', () => {
    const found = appFiles.filter(file => !FOR_THE_MODEL.has(file)).flatMap(file => scriptSentences(read(file)).map(text => `${file}: ${text}`))
    expect(found).toEqual([])
  })

  it('asks only for keys that English has', () => {
    const keys = englishKeys()
    const missing: string[] = []
    let asked = 0
    for (const file of appFiles) {
      const source = read(file)
      for (const match of source.matchAll(/(?:\$t|\bt|\btr)\(\s*(['"`])([\w.-]+?)(\$\{|\1)|keypath="([\w.-]+)"/g)) {
        const key = match[2] ?? match[4]!
        asked++
        // A key built at run time (`stepKinds.${kind}.label`): its fixed start must name a group.
        const known = match[3] === '${' ? keys.has(key.replace(/\.$/, '')) : keys.has(key)
        if (!known) missing.push(`${file}: ${key}`)
      }
    }
    expect(missing).toEqual([])
    expect(asked).toBeGreaterThan(1000)
  })
})
