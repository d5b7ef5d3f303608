import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONFIGURATION_TABLE_HEADER, configurationTable, settingDocs } from '../../server/lib/config/settings-docs'
import { runtimeConfigDefaults } from '../support/server-config'

const runtimeConfig = runtimeConfigDefaults()
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
const ciScript = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')

function leafPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [path]
  return Object.entries(value).flatMap(([key, child]) => leafPaths(child, [...path, key]))
}

describe('README', () => {
  it('documents every setting of the schema with its variable and default, as `npm run docs:config` writes it', () => {
    const start = readme.indexOf(CONFIGURATION_TABLE_HEADER)
    expect(start, 'README lacks the configuration table').toBeGreaterThan(0)
    const table = readme.slice(start, readme.indexOf('\n\n', start))
    expect(table, 'README\'s configuration table is out of step with server/lib/config/server-config.ts: run npm run docs:config').toBe(configurationTable())
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
