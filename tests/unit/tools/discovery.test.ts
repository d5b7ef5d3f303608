import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { findToolFiles, displayPath } from '../../../server/lib/tools/tool-files'
import { registerToolModules, resolveToolExport, type ToolModuleSource } from '../../../server/lib/tools/discovery'
import { clearServerTools, listServerTools } from '../../../server/lib/tools/registry'
import { executeServerTool } from '../../../server/lib/tools/execute-tool'
import { defineServerTool } from '../../../server/lib/tools/define-tool'

const fixturesDir = join(import.meta.dirname, '../../fixtures/tool-files')

/** The same list the build-time module generates, with Vite's import() as the loader. */
function sourcesFor(dir: string): ToolModuleSource[] {
  return findToolFiles(dir).map(file => ({ path: displayPath(dir, file), load: () => import(/* @vite-ignore */ file) }))
}

beforeEach(() => {
  clearServerTools()
})

describe('findToolFiles', () => {
  it('walks folders recursively, sorted, skipping _-prefixed files and folders, type declarations and tests', () => {
    const files = findToolFiles(fixturesDir).map(file => displayPath(fixturesDir, file))
    expect(files).toEqual([
      'good-defined.ts',
      'malformed-bad-name.ts',
      'malformed-execute-not-function.ts',
      'malformed-no-tool.ts',
      'malformed-throws-on-import.ts',
      'nested/deeper/good-chatdock.js',
      'nested/good-default-object.mjs',
      'zz-duplicate-of-defined.ts',
    ])
  })

  it('treats a missing folder as no tools', () => {
    expect(findToolFiles(join(fixturesDir, 'does-not-exist'))).toEqual([])
  })
})

describe('registerToolModules', () => {
  it('registers every good file and reports each malformed one with its path and what is wrong', async () => {
    const report = await registerToolModules(sourcesFor(fixturesDir))

    expect(report.registered).toEqual([
      { path: 'good-defined.ts', name: 'fixture_defined' },
      { path: 'nested/deeper/good-chatdock.js', name: 'fixture_chatdock' },
      { path: 'nested/good-default-object.mjs', name: 'fixture_default_object' },
    ])
    const failures = Object.fromEntries(report.failed.map(failure => [failure.path, failure.error]))
    expect(Object.keys(failures)).toEqual([
      'malformed-bad-name.ts',
      'malformed-execute-not-function.ts',
      'malformed-no-tool.ts',
      'malformed-throws-on-import.ts',
      'zz-duplicate-of-defined.ts',
    ])
    expect(failures['malformed-bad-name.ts']).toMatch(/Invalid tool name "has spaces in it"/)
    expect(failures['malformed-execute-not-function.ts']).toMatch(/`execute` is not a function/)
    expect(failures['malformed-no-tool.ts']).toMatch(/exports no tool; expected `export default defineServerTool/)
    expect(failures['malformed-throws-on-import.ts']).toMatch(/failed to import: missing WEATHER_API_KEY/)
    expect(failures['zz-duplicate-of-defined.ts']).toMatch(/"fixture_defined" is already registered/)
  })

  it('leaves the registered tools working', async () => {
    await registerToolModules(sourcesFor(fixturesDir))
    expect(listServerTools().map(tool => tool.name)).toEqual(['fixture_defined', 'fixture_chatdock', 'fixture_default_object'])
    expect((await executeServerTool('fixture_defined', '{"word":"hi"}')).result).toBe('HI')
    expect((await executeServerTool('fixture_chatdock', '{"n":21}')).result).toBe('{"doubled":42}')
    expect((await executeServerTool('fixture_chatdock', '{}')).error).toMatch(/missing required field "n"/)
  })

  it('reports a loader that rejects with a non-Error value', async () => {
    const report = await registerToolModules([{ path: 'x.ts', load: () => Promise.reject('nope') }])
    expect(report.failed).toEqual([{ path: 'x.ts', error: 'failed to import: nope' }])
  })
})

describe('resolveToolExport', () => {
  it('prefers a defineServerTool default export', () => {
    const tool = defineServerTool({ name: 'a', description: 'a', handler: () => 'a' })
    expect(resolveToolExport({ default: tool })).toBe(tool)
  })

  it.each([
    ['null', null, /exports nothing/],
    ['an execute without definition', { execute: () => 'x' }, /no `definition` object/],
    ['a default function', { default: () => 'x' }, /exports no tool/],
  ])('explains what is wrong with %s', (_label, namespace, message) => {
    expect(() => resolveToolExport(namespace)).toThrow(message)
  })
})
