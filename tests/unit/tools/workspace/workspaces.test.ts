/** Workspaces: paths confined and made normal, quotas, exact edits, globs and RE2 grep that no pattern can stall. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createMemoryWorkspaceStore } from '../../../../server/lib/stores/workspaces/memory'
import { workspacePath } from '../../../../server/lib/tools/workspace/paths'
import { compileGlob } from '../../../../server/lib/tools/workspace/search'
import { Workspaces, workspaceIdFor } from '../../../../server/lib/tools/workspace/workspaces'
import { workspaceFileTools } from '../../../../server/lib/tools/workspace/file-tools'

const limits = { bytesPerUser: 10_000, filesPerUser: 5, fileBytes: 4_000 }
const open = () => new Workspaces(createMemoryWorkspaceStore(), limits)

describe('workspace paths', () => {
  it('gives every file one spelling', () => {
    for (const raw of ['notes.md', '/notes.md', './notes.md', 'a/../notes.md', './/notes.md', 'notes.md/', '\\notes.md']) expect(workspacePath(raw)).toBe('notes.md')
    expect(workspacePath('src\\lib//app.js')).toBe('src/lib/app.js')
    // One Unicode form: é as one code point or as e + combining accent is the same file.
    expect(workspacePath('caf\u0065\u0301.txt')).toBe(workspacePath('caf\u00e9.txt'))
    expect(workspacePath('', { allowTop: true })).toBe('')
  })

  it('refuses what climbs out, hides control characters or stands for . and .. in disguise', () => {
    for (const [raw, why] of [
      ['../secret', /above the workspace/],
      ['a/../../etc/passwd', /above the workspace/],
      ['/../../etc/passwd', /above the workspace/],
      ['%2e%2e/etc/passwd', /stands for "\." or "\.\."/],
      ['a/%2E/b', /stands for/],
      ['notes\u0000.md', /control characters/],
      ['line\nbreak.md', /control characters/],
      ['', /names no file/],
      ['/', /names no file/],
      ['x'.repeat(600), /longer than 512/],
      [Array.from({ length: 20 }, () => 'd').join('/'), /folders deep/],
    ] as const) expect(() => workspacePath(raw), raw).toThrow(why)
  })

  it('names the workspace of a conversation and of a workflow run (its steps share it)', () => {
    expect(workspaceIdFor({ threadId: 't-1', jobId: 'j-1' })).toBe('thread:t-1')
    expect(workspaceIdFor({ threadId: 'workflow:w-1', jobId: 'j-2' })).toBe('run:j-2')
  })
})

describe('workspaces', () => {
  it('reads back what was written, under its normal path, and lists folders', async () => {
    const workspaces = open()
    await workspaces.write('thread:a', 'u', './src/app.js', 'console.log(1)\n')
    await workspaces.write('thread:a', 'u', 'notes.md', '# Notes\n')
    expect((await workspaces.readText('thread:a', '/src/app.js')).text).toBe('console.log(1)\n')
    expect((await workspaces.list('thread:a', 'src')).map(file => file.path)).toEqual(['src/app.js'])
    await expect(workspaces.read('thread:b', 'notes.md')).rejects.toMatchObject({ statusCode: 404 })
    await expect(workspaces.read('thread:a', 'lib/app.js')).rejects.toThrow(/no file lib\/app\.js in this workspace; there is src\/app\.js/)
    await expect(workspaces.write('thread:a', 'u', 'src', 'x')).rejects.toThrow(/is a folder/)
    await expect(workspaces.write('thread:a', 'u', 'notes.md/inner.txt', 'x')).rejects.toThrow(/is a file, so it cannot also be a folder/)
  })

  it('keeps each person within their bytes, files and file size, counting a replaced file once', async () => {
    const workspaces = open()
    await expect(workspaces.write('thread:a', 'u', 'big.txt', 'x'.repeat(4_001))).rejects.toThrow(/at most/)
    await workspaces.write('thread:a', 'u', 'one.txt', 'x'.repeat(3_000))
    await workspaces.write('thread:b', 'u', 'two.txt', 'x'.repeat(3_000))
    await workspaces.write('thread:c', 'u', 'three.txt', 'x'.repeat(3_000))
    await expect(workspaces.write('thread:c', 'u', 'four.txt', 'x'.repeat(1_001))).rejects.toMatchObject({ statusCode: 409, message: expect.stringMatching(/Delete files you no longer need/) })
    // Replacing a file counts its new size in place of the old.
    await workspaces.write('thread:a', 'u', 'one.txt', 'x'.repeat(4_000))
    await workspaces.write('thread:a', 'u', 'small.txt', '')
    await workspaces.write('thread:a', 'u', 'small2.txt', '')
    await expect(workspaces.write('thread:a', 'u', 'small3.txt', '')).rejects.toThrow(/5 workspace files, the most/)
    // Another person's quota is their own.
    await workspaces.write('thread:z', 'other', 'mine.txt', 'x'.repeat(4_000))
    expect(await workspaces.usage('u')).toEqual({ bytes: 10_000, files: 5, maxBytes: 10_000, maxFiles: 5 })
  })

  it('edits by exact text: once, every time with all, refusing what is missing or ambiguous; edits at once both land', async () => {
    const workspaces = open()
    await workspaces.write('thread:a', 'u', 'todo.md', '- milk\n- eggs\n- milk\n')
    await expect(workspaces.edit('thread:a', 'u', 'todo.md', '- milk', '- oat milk')).rejects.toThrow(/occurs 2 times/)
    await expect(workspaces.edit('thread:a', 'u', 'todo.md', '- bread', '- rye')).rejects.toThrow(/not found/)
    expect((await workspaces.edit('thread:a', 'u', 'todo.md', '- milk', '- oat milk', true)).replaced).toBe(2)
    // $& and $1 are text, not replacement patterns.
    await workspaces.edit('thread:a', 'u', 'todo.md', '- eggs', '- $& $1')
    await Promise.all([workspaces.edit('thread:a', 'u', 'todo.md', '- $& $1', '- eggs'), workspaces.edit('thread:a', 'u', 'todo.md', '- oat milk\n- ', '- soy milk\n- ')])
    expect((await workspaces.readText('thread:a', 'todo.md')).text).toBe('- soy milk\n- eggs\n- oat milk\n')
    await workspaces.write('thread:a', 'u', 'image.bin', new Uint8Array([0, 1, 2, 255]))
    await expect(workspaces.edit('thread:a', 'u', 'image.bin', 'a', 'b')).rejects.toThrow(/binary file/)
  })

  it('refuses an edit whose result would pass the file size from the sizes alone, before building it', async () => {
    const workspaces = open()
    await workspaces.write('thread:a', 'u', 'big.txt', 'a'.repeat(3_000))
    // 3,000 × (100 − 1) bytes more: known from the counts, so the 300 KB text is never built.
    await expect(workspaces.edit('thread:a', 'u', 'big.txt', 'a', 'b'.repeat(100), true)).rejects.toThrow(/would be 0\.3 MiB after 3,000 replacements; a workspace file may be at most/)
    // Multi-byte text counts in bytes, as it is stored.
    await expect(workspaces.edit('thread:a', 'u', 'big.txt', 'a'.repeat(3_000), 'é'.repeat(2_001))).rejects.toThrow(/after this edit/)
    expect((await workspaces.readText('thread:a', 'big.txt')).text).toBe('a'.repeat(3_000))
  })

  it('finds files by glob: a bare name anywhere, ** across folders, braces and ?', async () => {
    const workspaces = open()
    for (const path of ['README.md', 'docs/guide.md', 'src/a.ts', 'src/lib/b.ts']) await workspaces.write('thread:g', 'u', path, path)
    const paths = async (glob: string) => (await workspaces.glob('thread:g', glob)).map(file => file.path)
    expect(await paths('*.md')).toEqual(['README.md', 'docs/guide.md'])
    expect(await paths('src/**/*.ts')).toEqual(['src/a.ts', 'src/lib/b.ts'])
    expect(await paths('src/*.ts')).toEqual(['src/a.ts'])
    expect(await paths('{docs,src}/?.ts')).toEqual(['src/a.ts'])
    expect(compileGlob('a.(b)+[c]')('a.(b)+[c]')).toBe(true)
    expect(() => compileGlob('{a,b')).toThrow(/never closes/)
  })

  it('greps with RE2: a pattern that stalls a backtracking engine answers at once while the server answers others', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 50_000_000, filesPerUser: 100, fileBytes: 5_000_000 })
    await workspaces.write('thread:r', 'u', 'app.log', `${'a'.repeat(200_000)}!\nERROR: disk full\nerror: retry\n`)
    await workspaces.write('thread:r', 'u', 'notes.md', 'nothing here\n')
    const server = createServer((_request, response) => response.end('pong'))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const searching = workspaces.grep('thread:r', '(a+)+$', { maxMatches: 10 })
      const pong = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`).then(response => response.text())
      expect(pong).toBe('pong')
      expect((await searching).matches).toEqual([])
      const found = await workspaces.grep('thread:r', 'error', { ignoreCase: true, glob: '*.log', maxMatches: 10 })
      expect(found.matches.map(match => [match.path, match.line, match.text])).toEqual([['app.log', 2, 'ERROR: disk full'], ['app.log', 3, 'error: retry']])
      expect((await workspaces.grep('thread:r', 'a.b', { literal: true, maxMatches: 10 })).matches).toEqual([])
      expect((await workspaces.grep('thread:r', 'e', { maxMatches: 1 })).truncated).toBe(true)
      await expect(workspaces.grep('thread:r', '(?<=x)y', { maxMatches: 1 })).rejects.toThrow(/RE2 accepts.*literal: true/)
    } finally {
      server.close()
    }
  })
})

describe('the file tools', () => {
  it('work on the calling conversation\'s workspace only', async () => {
    const workspaces = open()
    const tools = Object.fromEntries(workspaceFileTools(workspaces).map(tool => [tool.definition.function.name, tool]))
    expect(Object.keys(tools)).toEqual(['read', 'write', 'edit', 'ls', 'glob', 'grep'])
    const context = (threadId: string) => ({ userId: 'u', threadId, jobId: 'j', credentials: { get: () => undefined, has: () => false } })
    await tools.write!.handler({ path: 'notes/a.md', content: 'alpha\nbeta\n' }, context('t1'))
    await tools.write!.handler({ path: 'b.md', content: 'gamma' }, context('t1'))
    expect(await tools.ls!.handler({}, context('t1'))).toEqual({ folder: '/', entries: [{ name: 'b.md', type: 'file', size: 5 }, { name: 'notes/', type: 'folder', size: 11, files: 1 }] })
    expect(await tools.ls!.handler({ path: 'notes' }, context('t1'))).toMatchObject({ folder: 'notes/', entries: [{ name: 'a.md', type: 'file' }] })
    expect(await tools.read!.handler({ path: 'notes/a.md', offset: 2, limit: 1 }, context('t1'))).toMatchObject({ content: 'beta', lines: '2-2', totalLines: 3 })
    expect(await tools.edit!.handler({ path: 'notes/a.md', old_text: 'beta', new_text: 'BETA' }, context('t1'))).toMatchObject({ replaced: 1 })
    expect(await tools.grep!.handler({ pattern: 'BETA' }, context('t1'))).toEqual({ matches: [{ path: 'notes/a.md', line: 2, text: 'BETA' }] })
    expect(await tools.ls!.handler({}, context('t2'))).toMatchObject({ entries: [], note: 'The workspace is empty here.' })
    await expect(Promise.resolve().then(() => tools.read!.handler({ path: 'b.md' }, context('t2')))).rejects.toThrow(/no file b\.md/)
    for (const tool of Object.values(tools)) expect(tool.definition.capabilities).toEqual(['workspace'])
  })
})
