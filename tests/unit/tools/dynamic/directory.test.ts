import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DynamicToolsDirectory } from '../../../../server/lib/tools/dynamic/directory'
import { clearServerTools, getServerTool, registerServerTool } from '../../../../server/lib/tools/registry'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'

const logger = { info: () => {}, error: () => {} }
let dir: string
let directory: DynamicToolsDirectory

const greeter = (greeting: string) => `
interface Args { name: string }
export default {
  name: 'greet',
  description: 'Greets someone.',
  parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  handler: (args: Args): string => \`${greeting}, \${args.name}!\`,
}
`

beforeEach(() => {
  clearServerTools()
  dir = mkdtempSync(join(tmpdir(), 'or3-dynamic-tools-'))
})
afterEach(async () => {
  await directory?.close()
  clearServerTools()
  rmSync(dir, { recursive: true, force: true })
})

async function greet(): Promise<string | null> {
  return (await executeServerTool('greet', JSON.stringify({ name: 'Ada' }))).result
}

describe('the dynamic tools directory', () => {
  it('loads the files already there, then follows adds, changes, breakage and deletes without a restart', async () => {
    writeFileSync(join(dir, 'greet.ts'), greeter('Hello'))
    writeFileSync(join(dir, '_draft.ts'), 'this is not even code')
    writeFileSync(join(dir, 'notes.txt'), 'not a tool')
    directory = new DynamicToolsDirectory(dir, logger)
    const changes = vi.fn()
    directory.onChange(changes)
    await directory.start()
    expect(getServerTool('greet')).toMatchObject({ source: { kind: 'dynamic', name: 'greet.ts' } })
    expect(await greet()).toBe('Hello, Ada!')
    expect(directory.status()).toEqual([{ path: 'greet.ts', tool: 'greet', loadedAt: expect.any(Number) }])

    // Added: an .mjs in the ChatDock form.
    writeFileSync(join(dir, 'shout.mjs'), `export const definition = { type: 'function', function: { name: 'shout', description: 'Upper-cases text.', parameters: { type: 'object', properties: { text: { type: 'string' } } } } }
export function execute({ text }) { return String(text).toUpperCase() }`)
    await vi.waitFor(() => expect(getServerTool('shout')).toBeDefined(), { timeout: 30_000, interval: 20 })
    expect((await executeServerTool('shout', '{"text":"hey"}')).result).toBe('HEY')

    // Changed: the new version replaces the old.
    writeFileSync(join(dir, 'greet.ts'), greeter('Howdy'))
    await vi.waitFor(async () => expect(await greet()).toBe('Howdy, Ada!'), { timeout: 30_000, interval: 20 })

    // Broken: reported with its path and reason, and the version that loaded keeps serving.
    writeFileSync(join(dir, 'greet.ts'), 'export default {{ nope')
    await vi.waitFor(() => expect(directory.status().find(file => file.path === 'greet.ts')?.error).toBeDefined(), { timeout: 30_000, interval: 20 })
    expect(directory.status().find(file => file.path === 'greet.ts')).toMatchObject({ tool: 'greet', error: expect.any(String) })
    expect(await greet()).toBe('Howdy, Ada!')

    // Deleted: unregistered.
    rmSync(join(dir, 'shout.mjs'))
    await vi.waitFor(() => expect(getServerTool('shout')).toBeUndefined(), { timeout: 30_000, interval: 20 })
    expect(changes.mock.calls.length).toBeGreaterThanOrEqual(3)
  })

  it('refuses a file whose tool takes a name another source has, and says which', async () => {
    registerServerTool({ type: 'function', function: { name: 'calculate', parameters: { type: 'object', properties: {} } } }, () => 'built in', { source: { kind: 'builtin' } })
    writeFileSync(join(dir, 'calc.mjs'), `export default { name: 'calculate', description: 'x', handler: () => 'mine' }`)
    writeFileSync(join(dir, 'empty.mjs'), `export const nothing = 1`)
    directory = new DynamicToolsDirectory(dir, logger)
    await directory.start()
    expect((await executeServerTool('calculate', '{}')).result).toBe('built in')
    expect(directory.status()).toEqual([
      { path: 'calc.mjs', error: 'the name "calculate" is taken by another tool' },
      { path: 'empty.mjs', error: expect.stringMatching(/exports no tool/) },
    ])
  })
})
