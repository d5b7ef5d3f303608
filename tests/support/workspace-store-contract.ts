import { afterEach, describe, expect, it } from 'vitest'
import type { WorkspaceStore } from '../../server/lib/stores/workspaces/workspace-store'

/** The contract every workspace store keeps (memory, sqlite, Convex). */
export function describeWorkspaceStoreContract(name: string, open: () => WorkspaceStore): void {
  describe(`workspace store: ${name}`, () => {
    let store: WorkspaceStore | undefined
    afterEach(async () => {
      await store?.close()
      store = undefined
    })
    const bytes = (text: string) => new TextEncoder().encode(text)

    it('writes, lists by path, reads back and replaces files', async () => {
      store = open()
      await store.writeFile({ workspaceId: 'thread:a', userId: 'u1', path: 'notes.md', bytes: bytes('# Notes'), now: 10 })
      await store.writeFile({ workspaceId: 'thread:a', userId: 'u1', path: 'src/app.js', bytes: bytes('console.log(1)'), now: 11 })
      await store.writeFile({ workspaceId: 'thread:b', userId: 'u1', path: 'other.txt', bytes: bytes('b'), now: 12 })
      expect(await store.listFiles('thread:a')).toEqual([{ path: 'notes.md', size: 7, updatedAt: 10 }, { path: 'src/app.js', size: 14, updatedAt: 11 }])
      const read = await store.readFile('thread:a', 'notes.md')
      expect(new TextDecoder().decode(read!.bytes)).toBe('# Notes')
      expect(await store.writeFile({ workspaceId: 'thread:a', userId: 'u1', path: 'notes.md', bytes: bytes('# Notes, longer'), now: 20 })).toEqual({ path: 'notes.md', size: 15, updatedAt: 20 })
      expect(new TextDecoder().decode((await store.readFile('thread:a', 'notes.md'))!.bytes)).toBe('# Notes, longer')
      expect(await store.readFile('thread:a', 'missing.md')).toBeNull()
      expect(await store.usage('u1')).toEqual({ bytes: 15 + 14 + 1, files: 3 })
    })

    it('keeps a file larger than one storage chunk whole, bytes as they were', async () => {
      store = open()
      const large = new Uint8Array(1_300_000)
      for (let index = 0; index < large.length; index++) large[index] = (index * 7) % 256
      await store.writeFile({ workspaceId: 'run:j', userId: 'u2', path: 'data.bin', bytes: large })
      const read = await store.readFile('run:j', 'data.bin')
      expect(read!.size).toBe(large.length)
      expect(Buffer.from(read!.bytes).equals(Buffer.from(large))).toBe(true)
    })

    it('keeps only a view\'s own bytes (a Node Buffer is a window on a larger shared buffer)', async () => {
      store = open()
      const pooled = Buffer.from('just these bytes')
      const window = new Uint8Array(new TextEncoder().encode('before|the middle|after').buffer, 7, 10)
      expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength)
      await store.writeFile({ workspaceId: 'thread:v', userId: 'u3', path: 'pooled.txt', bytes: pooled })
      await store.writeFile({ workspaceId: 'thread:v', userId: 'u3', path: 'window.txt', bytes: window })
      expect(new TextDecoder().decode((await store.readFile('thread:v', 'pooled.txt'))!.bytes)).toBe('just these bytes')
      expect(new TextDecoder().decode((await store.readFile('thread:v', 'window.txt'))!.bytes)).toBe('the middle')
    })

    it('deletes one file, a workspace, and a person\'s files everywhere', async () => {
      store = open()
      for (const [workspaceId, userId, path] of [['thread:a', 'u1', 'a.txt'], ['thread:a', 'u1', 'b.txt'], ['thread:b', 'u1', 'c.txt'], ['thread:c', 'u2', 'd.txt']] as const) {
        await store.writeFile({ workspaceId, userId, path, bytes: bytes(path) })
      }
      expect(await store.deleteFile('thread:a', 'a.txt')).toBe(true)
      expect(await store.deleteFile('thread:a', 'a.txt')).toBe(false)
      expect((await store.listFiles('thread:a')).map(file => file.path)).toEqual(['b.txt'])
      await store.deleteWorkspace('thread:a')
      expect(await store.listFiles('thread:a')).toEqual([])
      expect(await store.usage('u1')).toEqual({ bytes: 5, files: 1 })
      await store.deleteUserFiles('u1')
      expect(await store.listFiles('thread:b')).toEqual([])
      expect(await store.usage('u1')).toEqual({ bytes: 0, files: 0 })
      expect((await store.listFiles('thread:c')).map(file => file.path)).toEqual(['d.txt'])
    })
  })
}
