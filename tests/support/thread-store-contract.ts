/** The behaviour every thread store must have (memory, sqlite, Convex). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ThreadStore } from '../../server/lib/stores/threads/thread-store'

/** Registers the thread store contract tests for one store. */
export function describeThreadStoreContract(name: string, createStore: () => ThreadStore | Promise<ThreadStore>): void {
  describe(`thread store contract: ${name}`, () => {
    let store: ThreadStore
    beforeEach(async () => {
      store = await createStore()
    })
    afterEach(async () => {
      await store.close()
    })

    it('creates threads and lists a user\'s, most recently active first', async () => {
      const first = await store.createThread({ userId: 'a', title: 'First', now: 1 })
      const second = await store.createThread({ userId: 'a', now: 2 })
      await store.createThread({ userId: 'b', title: 'Other', now: 3 })
      expect(first).toMatchObject({ userId: 'a', title: 'First', createdAt: 1, updatedAt: 1 })
      expect(second.title).toBe('New chat')
      expect((await store.listThreads('a')).map(thread => thread.id)).toEqual([second.id, first.id])
      await store.appendMessage({ threadId: first.id, role: 'user', content: 'hi', now: 10 })
      expect((await store.listThreads('a')).map(thread => thread.id)).toEqual([first.id, second.id])
      expect(await store.listThreads('a', { limit: 1 })).toHaveLength(1)
      expect(await store.getThread('missing')).toBeNull()
    })

    it('renames and deletes a thread with its messages', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const message = await store.appendMessage({ threadId: thread.id, role: 'user', content: 'hello', now: 2 })
      expect(await store.renameThread(thread.id, 'Renamed', 5)).toBe(true)
      expect(await store.getThread(thread.id)).toMatchObject({ title: 'Renamed', updatedAt: 5 })
      expect(await store.renameThread('missing', 'x')).toBe(false)
      expect(await store.deleteThread(thread.id)).toBe(true)
      expect(await store.getThread(thread.id)).toBeNull()
      expect(await store.getMessage(message.id)).toBeNull()
      expect(await store.listMessages(thread.id)).toEqual([])
      expect(await store.deleteThread(thread.id)).toBe(false)
    })

    it('keeps messages in order, with what an ended job wrote back', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const question = await store.appendMessage({ threadId: thread.id, role: 'user', content: 'What time is it?', now: 2 })
      const answer = await store.appendMessage({ threadId: thread.id, role: 'assistant', content: '', model: 'm', jobId: 'job-1', status: 'streaming', now: 2 })
      expect(answer).toMatchObject({ role: 'assistant', jobId: 'job-1', status: 'streaming', model: 'm' })
      const toolCalls = [{ id: 'c', name: 'get_current_time', arguments: '{}', round: 1, status: 'completed' as const, result: '12:00' }]
      expect(await store.updateMessage(answer.id, { content: 'It is noon.', status: 'complete', toolCalls, reasoning: 'r', finishReason: 'stop' })).toBe(true)
      expect((await store.listMessages(thread.id)).map(message => message.id)).toEqual([question.id, answer.id])
      expect(await store.getMessage(answer.id)).toMatchObject({ content: 'It is noon.', status: 'complete', toolCalls, reasoning: 'r', finishReason: 'stop', jobId: 'job-1' })
      await store.updateMessage(answer.id, { status: 'error', error: { message: 'boom', kind: 'server' } })
      expect(await store.getMessage(answer.id)).toMatchObject({ status: 'error', error: { message: 'boom' }, content: 'It is noon.' })
      expect(await store.updateMessage('missing', { content: 'x' })).toBe(false)
      await expect(store.appendMessage({ threadId: 'missing', role: 'user', content: 'x' })).rejects.toThrow()
    })
  })
}
