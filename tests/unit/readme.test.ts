import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { envVariableFor } from '../../server/lib/config/server-config'
import { runtimeConfigDefaults } from '../support/server-config'

const runtimeConfig = runtimeConfigDefaults()
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
const ciScript = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')

function leafPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [path]
  return Object.entries(value).flatMap(([key, child]) => (key === 'public' ? [] : leafPaths(child, [...path, key])))
}

describe('README', () => {
  it('documents the environment variable of every runtime setting, with its default', () => {
    const settings = leafPaths(runtimeConfig)
    expect(settings.length).toBeGreaterThan(20)
    for (const path of settings) {
      const variable = envVariableFor(path)
      const row = readme.split('\n').find(line => line.startsWith(`| \`${variable}\``))
      expect(row, `README lacks a row for ${variable}`).toBeDefined()
      const value = path.reduce<any>((node, key) => node[key], runtimeConfig)
      if (value !== '') expect(row).toContain(`\`${String(value)}\``)
    }
  })

  it('gives the two commands of a fresh machine, and CI runs exactly the test one', () => {
    expect(readme).toContain('npm install && npm run dev')
    expect(readme).toMatch(/^npm test\b/m)
    expect(packageJson.scripts.test).toMatch(/^npm run typecheck && vitest run$/)
    expect(ciScript).toMatch(/^npm ci\b/m)
    expect(ciScript.trim().split('\n').at(-1)).toBe('npm test')
  })
})
