import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONFIGURATION_TABLE_HEADER, configurationTable, settingDocs } from '../../server/lib/config/settings-docs'
import { runtimeConfigDefaults } from '../support/server-config'

const runtimeConfig = runtimeConfigDefaults()
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const configurationPage = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
const ciScript = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')

function leafPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [path]
  return Object.entries(value).flatMap(([key, child]) => leafPaths(child, [...path, key]))
}

describe('README', () => {
  it('documents every setting of the schema with its variable and default, as `npm run docs:config` writes it', () => {
    const start = configurationPage.indexOf(CONFIGURATION_TABLE_HEADER)
    expect(start, 'docs/configuration.md lacks the configuration table').toBeGreaterThan(0)
    const table = configurationPage.slice(start, configurationPage.indexOf('\n\n', start))
    expect(table, 'docs/configuration.md\'s table is out of step with server/lib/config/server-config.ts: run npm run docs:config').toBe(configurationTable())
  })

  it('stays a newcomer\'s page (under 400 lines), and every link of it and of docs/ leads somewhere', () => {
    expect(readme.split('\n').length).toBeLessThan(400)
    const pages = ['README.md', ...readdirSync(new URL('../../docs/', import.meta.url)).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]
    const anchorsOf = (text: string) => {
      let fenced = false
      const anchors = new Set<string>()
      for (const line of text.split('\n')) {
        if (/^```[\w+-]*\s*$/.test(line)) fenced = !fenced
        const heading = !fenced && /^#{1,6} (.+)$/.exec(line)
        if (heading) anchors.add(heading[1]!.trim().toLowerCase().replaceAll(/[^\w\- ]/g, '').replaceAll(' ', '-'))
      }
      return anchors
    }
    for (const page of pages) {
      const text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8')
      for (const [, target] of text.matchAll(/\]\(((?!https?:|mailto:)[^)\s]+)\)/g)) {
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const file = path ? new URL(path, new URL(`../../${page}`, import.meta.url)) : new URL(`../../${page}`, import.meta.url)
        expect(existsSync(file), `${page} links to ${target}, which does not exist`).toBe(true)
        if (anchor && file.pathname.endsWith('.md')) expect(anchorsOf(readFileSync(file, 'utf8')), `${page} links to ${target}: no such heading`).toContain(anchor)
      }
    }
  })

  it('lists every runtime setting (nuxt.config.ts takes them from the schema), each row with its default', () => {
    const settings = leafPaths(runtimeConfig)
    expect(settings.length).toBeGreaterThan(90)
    const documented = settingDocs()
    expect(documented.map(doc => doc.path.join('.'))).toEqual(settings.map(path => path.join('.')))
    for (const doc of documented) {
      expect(doc.description, `${doc.variable} has no meaning in the schema`).not.toBe('')
      expect(doc.fallback).toEqual(doc.path.reduce<any>((node, key) => node[key], runtimeConfig))
    }
  })

  it('gives the two commands of a fresh machine, and CI runs exactly the test one', () => {
    expect(readme).toContain('npm install && npm run dev')
    expect(readme).toMatch(/^npm test\b/m)
    expect(packageJson.scripts.test).toBe('vitest run')
    expect(ciScript).toMatch(/^npm ci\b/m)
    expect(ciScript.trim().split('\n').at(-1)).toBe('npm test')
  })
})
