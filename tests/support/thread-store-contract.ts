/** The behaviour every thread store must have (memory, sqlite, Convex). */
import { useTestFixture } from './file-fixture'
import { describe, expect, it } from 'vitest'
import type { ThreadStore } from '../../server/lib/stores/threads/thread-store'

/** Registers the thread store contract tests for one store. */
export function describeThreadStoreContract(name: string, createStore: () => ThreadStore | Promise<ThreadStore>): void {
  describe(`thread store contract: ${name}`, () => {
    const store = useTestFixture('The store', createStore, store => store.close())

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
      const usage = { promptTokens: 120, completionTokens: 30, totalTokens: 150, cachedTokens: 100, reasoningTokens: 0, cost: 0.00042 }
      expect(await store.updateMessage(answer.id, { content: 'It is noon.', status: 'complete', toolCalls, reasoning: 'r', finishReason: 'stop', usage })).toBe(true)
      expect((await store.listMessages(thread.id)).map(message => message.id)).toEqual([question.id, answer.id])
      expect(await store.getMessage(answer.id)).toMatchObject({ content: 'It is noon.', status: 'complete', toolCalls, reasoning: 'r', finishReason: 'stop', usage, jobId: 'job-1' })
      expect((await store.getMessage(question.id))!.usage).toBeUndefined()
      await store.updateMessage(answer.id, { status: 'error', error: { message: 'boom', kind: 'server' } })
      expect(await store.getMessage(answer.id)).toMatchObject({ status: 'error', error: { message: 'boom' }, content: 'It is noon.', usage })
      expect(await store.updateMessage('missing', { content: 'x' })).toBe(false)
      await expect(store.appendMessage({ threadId: 'missing', role: 'user', content: 'x' })).rejects.toThrow()
    })

    it('keeps each message\'s parent and the branch the person picked', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const question = await store.appendMessage({ threadId: thread.id, parentId: thread.id, role: 'user', content: 'Hi', now: 2 })
      const first = await store.appendMessage({ threadId: thread.id, parentId: question.id, role: 'assistant', content: 'Hello', status: 'complete', now: 3 })
      const second = await store.appendMessage({ threadId: thread.id, parentId: question.id, role: 'assistant', content: 'Hey', status: 'complete', now: 4 })
      expect(second.parentId).toBe(question.id)
      expect((await store.listMessages(thread.id)).map(message => [message.id, message.parentId])).toEqual([
        [question.id, thread.id], [first.id, question.id], [second.id, question.id],
      ])
      expect(await store.getMessage(first.id)).toMatchObject({ parentId: question.id })
      expect((await store.getThread(thread.id))!.activeMessageId).toBeUndefined()
      expect(await store.setActiveMessage(thread.id, first.id)).toBe(true)
      expect(await store.getThread(thread.id)).toMatchObject({ activeMessageId: first.id })
      expect((await store.listThreads('a'))[0]).toMatchObject({ activeMessageId: first.id })
      expect(await store.setActiveMessage('missing', first.id)).toBe(false)
    })

    it('keeps the files sent with a message, byte for byte, and deletes them with their thread', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const other = await store.createThread({ userId: 'a', now: 1 })
      // Larger than one Convex chunk (512 KiB), with every byte value.
      const big = new Uint8Array(700 * 1024).map((_, index) => (index * 7) % 256)
      const image = { id: 'att-image', name: 'photo.png', mediaType: 'image/png', kind: 'image' as const, size: big.length }
      const text = { id: 'att-text', name: 'notes.md', mediaType: 'text/markdown', kind: 'text' as const, size: 5 }
      await store.addAttachment({ attachment: image, bytes: big, threadId: thread.id, userId: 'a', now: 2 })
      await store.addAttachment({ attachment: text, bytes: new TextEncoder().encode('hello'), threadId: other.id, userId: 'a', now: 3 })
      await expect(store.addAttachment({ attachment: { ...text, id: 'att-lost' }, bytes: new Uint8Array([1]), threadId: 'missing', userId: 'a' })).rejects.toThrow()
      const message = await store.appendMessage({ threadId: thread.id, role: 'user', content: 'Look', attachments: [image] })
      expect((await store.getMessage(message.id))!.attachments).toEqual([image])
      expect((await store.listMessages(thread.id))[0]!.attachments).toEqual([image])

      const read = await store.readAttachment('att-image')
      expect(read).toMatchObject({ attachment: image, threadId: thread.id, userId: 'a', createdAt: 2 })
      expect(Buffer.from(read!.bytes).equals(Buffer.from(big))).toBe(true)
      expect(new TextDecoder().decode((await store.readAttachment('att-text'))!.bytes)).toBe('hello')
      expect(await store.readAttachment('missing')).toBeNull()
      expect(await store.attachmentBytes('a')).toBe(big.length + 5)
      expect(await store.attachmentBytes('b')).toBe(0)

      await store.deleteThread(thread.id)
      expect(await store.readAttachment('att-image')).toBeNull()
      expect(await store.attachmentBytes('a')).toBe(5)
    })

    it('finds a person\'s conversations by words in their titles and messages, never another person\'s', async () => {
      const tokyo = await store.createThread({ userId: 'a', title: 'Trip planning', now: 1 })
      await store.appendMessage({ threadId: tokyo.id, role: 'user', content: 'What time is it in Tokyo right now?', now: 2 })
      const answer = await store.appendMessage({ threadId: tokyo.id, role: 'assistant', content: '', status: 'streaming', now: 3 })
      await store.updateMessage(answer.id, { content: 'In Asia/Tokyo it is ten past nine in the evening. Café opens at ten.', status: 'complete' })
      const recipes = await store.createThread({ userId: 'a', title: 'Crème brûlée recipe', now: 4 })
      await store.appendMessage({ threadId: recipes.id, role: 'user', content: 'How long do I bake it?', now: 5 })
      const others = await store.createThread({ userId: 'b', title: 'Tokyo for someone else', now: 6 })
      await store.appendMessage({ threadId: others.id, role: 'user', content: 'Tokyo Tokyo Tokyo', now: 7 })

      const byMessage = await store.searchThreads('a', 'tokyo evening')
      expect(byMessage).toEqual([expect.objectContaining({ thread: expect.objectContaining({ id: tokyo.id }), messageId: answer.id, role: 'assistant' })])
      expect(byMessage[0]!.snippet).toMatch(/evening/)
      // Word prefixes, any case, accents ignored; every word must be there.
      expect((await store.searchThreads('a', 'TOK')).map(hit => hit.thread.id)).toEqual([tokyo.id])
      // A one-letter word matches only that word, never every word it starts.
      expect(await store.searchThreads('a', 't')).toEqual([])
      expect((await store.searchThreads('a', 'i do')).map(hit => hit.thread.id)).toEqual([recipes.id])
      expect((await store.searchThreads('a', 'creme brulee')).map(hit => ({ id: hit.thread.id, inTitle: hit.messageId === undefined }))).toEqual([{ id: recipes.id, inTitle: true }])
      expect((await store.searchThreads('a', 'cafe')).map(hit => hit.thread.id)).toEqual([tokyo.id])
      expect(await store.searchThreads('a', 'tokyo recipe')).toEqual([])
      // Operators, quotes and wildcards are words like any other, never syntax.
      expect(await store.searchThreads('a', '"tokyo" OR * NEAR( -x')).toEqual([])
      expect((await store.searchThreads('a', 'tokyo" OR "bake')).map(hit => hit.thread.id)).toEqual([])
      expect(await store.searchThreads('a', '   ')).toEqual([])
      expect((await store.searchThreads('b', 'tokyo')).map(hit => hit.thread.id)).toEqual([others.id])
      // A renamed title and a deleted conversation are searched as they are now.
      await store.renameThread(recipes.id, 'Desserts', 8)
      expect(await store.searchThreads('a', 'brulee')).toEqual([])
      expect((await store.searchThreads('a', 'desserts')).map(hit => hit.thread.id)).toEqual([recipes.id])
      await store.deleteThread(tokyo.id)
      expect(await store.searchThreads('a', 'tokyo')).toEqual([])
    })

    it('pins, files and tunes a thread without moving it, and lists pinned first and by folder', async () => {
      const old = await store.createThread({ userId: 'a', title: 'Old', now: 1 })
      const recent = await store.createThread({ userId: 'a', title: 'Recent', now: 2 })
      const other = await store.createThread({ userId: 'b', title: 'Theirs', now: 3 })
      const settings = { systemPrompt: 'Answer in French.', temperature: 0.2, topP: 0.9, maxTokens: 500, reasoningEffort: 'low' as const }
      expect(await store.updateThread(old.id, { pinned: true, folderId: 'f1', settings })).toBe(true)
      expect(await store.updateThread('missing', { pinned: true })).toBe(false)
      expect(await store.getThread(old.id)).toMatchObject({ pinned: true, folderId: 'f1', settings, updatedAt: 1 })
      expect((await store.listThreads('a')).map(thread => thread.id)).toEqual([old.id, recent.id])
      expect((await store.listThreads('a', { limit: 1 })).map(thread => thread.id)).toEqual([old.id])
      expect((await store.listThreads('a', { folderId: 'f1' })).map(thread => thread.id)).toEqual([old.id])
      expect(await store.listThreads('a', { folderId: 'f2' })).toEqual([])
      await store.updateThread(other.id, { folderId: 'f1' })
      expect((await store.listThreads('b', { folderId: 'f1' })).map(thread => thread.id)).toEqual([other.id])
      // Clearing: null takes a field away, leaving the others.
      expect(await store.updateThread(old.id, { pinned: false, folderId: null })).toBe(true)
      const cleared = await store.getThread(old.id)
      expect(cleared?.pinned).toBeFalsy()
      expect(cleared?.folderId).toBeUndefined()
      expect(cleared?.settings).toEqual(settings)
      await store.updateThread(old.id, { settings: null })
      expect((await store.getThread(old.id))?.settings).toBeUndefined()
      expect((await store.listThreads('a')).map(thread => thread.id)).toEqual([recent.id, old.id])
    })

    it('searches within one folder', async () => {
      const filed = await store.createThread({ userId: 'a', title: 'Garden plans', now: 1 })
      const loose = await store.createThread({ userId: 'a', title: 'Garden shed', now: 2 })
      await store.appendMessage({ threadId: loose.id, role: 'user', content: 'tomatoes in the garden', now: 3 })
      await store.appendMessage({ threadId: filed.id, role: 'user', content: 'tomatoes by the wall', now: 4 })
      await store.updateThread(filed.id, { folderId: 'f1' })
      expect((await store.searchThreads('a', 'garden')).map(hit => hit.thread.id).sort()).toEqual([filed.id, loose.id].sort())
      expect((await store.searchThreads('a', 'garden', { folderId: 'f1' })).map(hit => hit.thread.id)).toEqual([filed.id])
      expect((await store.searchThreads('a', 'tomatoes', { folderId: 'f1' })).map(hit => hit.thread.id)).toEqual([filed.id])
      expect(await store.searchThreads('a', 'shed', { folderId: 'f1' })).toEqual([])
    })

    it('keeps one changeable feedback per answer and lists recent feedback newest first', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const first = await store.appendMessage({ threadId: thread.id, role: 'assistant', content: 'One', model: 'm1', status: 'complete', now: 2 })
      const second = await store.appendMessage({ threadId: thread.id, role: 'assistant', content: 'Two', model: 'm2', status: 'complete', now: 3 })
      expect(await store.setFeedback(first.id, { rating: 'up', at: 100 })).toBe(true)
      expect(await store.setFeedback(second.id, { rating: 'down', reason: 'Too long', at: 200 })).toBe(true)
      expect(await store.setFeedback('missing', { rating: 'up', at: 1 })).toBe(false)
      expect((await store.getMessage(second.id))?.feedback).toEqual({ rating: 'down', reason: 'Too long', at: 200 })
      expect(await store.listFeedback(0, 10)).toEqual([{ rating: 'down', reason: 'Too long', at: 200, model: 'm2' }, { rating: 'up', at: 100, model: 'm1' }])
      expect(await store.listFeedback(150, 10)).toEqual([{ rating: 'down', reason: 'Too long', at: 200, model: 'm2' }])
      expect(await store.listFeedback(0, 1)).toHaveLength(1)
      // Changed, then taken back.
      await store.setFeedback(first.id, { rating: 'down', at: 300 })
      expect((await store.listFeedback(0, 10)).map(row => [row.model, row.rating])).toEqual([['m1', 'down'], ['m2', 'down']])
      await store.setFeedback(first.id, null)
      expect((await store.getMessage(first.id))?.feedback).toBeUndefined()
      expect((await store.listFeedback(0, 10)).map(row => row.model)).toEqual(['m2'])
      await store.deleteThread(thread.id)
      expect(await store.listFeedback(0, 10)).toEqual([])
    })
    it('keeps a conversation\'s queue in order, edits only waiting messages, lets one sender claim each, and drops it with the thread', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const other = await store.createThread({ userId: 'a', now: 1 })
      const item = (id: string, position: number, threadId = thread.id) => ({ id, threadId, userId: 'a', content: `message ${id}`, model: 'm', position, createdAt: position, updatedAt: position })
      await store.queue.add({ ...item('q2', 2), tools: ['clock'], apiKeyCiphertext: 'sealed' })
      await store.queue.add(item('q1', 1))
      await store.queue.add(item('q3', 1, other.id))
      expect((await store.queue.list(thread.id)).map(entry => entry.id)).toEqual(['q1', 'q2'])
      expect(await store.queue.get('q2')).toEqual({ ...item('q2', 2), tools: ['clock'], apiKeyCiphertext: 'sealed' })
      expect(await store.queue.get('missing')).toBeNull()
      // Edited, moved, handed to an answer, blocked and cleared.
      expect(await store.queue.update('q2', { content: 'changed', position: 0, steerJobId: 'job-1', blocked: 'no budget' }, 5)).toBe(true)
      expect(await store.queue.get('q2')).toMatchObject({ content: 'changed', position: 0, steerJobId: 'job-1', blocked: 'no budget', updatedAt: 5, tools: ['clock'], apiKeyCiphertext: 'sealed' })
      expect((await store.queue.list(thread.id)).map(entry => entry.id)).toEqual(['q2', 'q1'])
      expect(await store.queue.update('q2', { steerJobId: null, blocked: null }, 6)).toBe(true)
      const cleared = await store.queue.get('q2')
      expect(cleared?.steerJobId).toBeUndefined()
      expect(cleared?.blocked).toBeUndefined()
      // One sender wins a claim; a claimed message is not edited; released, it waits again saying why.
      expect(await store.queue.claim('q1', { answerId: 'a1', jobId: 'j1' }, 7)).toBe(true)
      expect(await store.queue.claim('q1', { answerId: 'a2', jobId: 'j2' }, 8)).toBe(false)
      expect((await store.queue.get('q1'))?.sending).toEqual({ answerId: 'a1', jobId: 'j1' })
      expect(await store.queue.update('q1', { content: 'too late' })).toBe(false)
      expect(await store.queue.release('q1', 'Daily budget used up', 9)).toBe(true)
      expect(await store.queue.get('q1')).toMatchObject({ content: 'message q1', blocked: 'Daily budget used up' })
      expect((await store.queue.get('q1'))?.sending).toBeUndefined()
      expect(await store.queue.claim('q1', { answerId: 'a3', jobId: 'j3' }, 10)).toBe(true)
      expect((await store.queue.get('q1'))?.blocked).toBeUndefined()
      expect((await store.queue.threadsWithItems(10)).sort()).toEqual([thread.id, other.id].sort())
      expect(await store.queue.remove('q1')).toBe(true)
      expect(await store.queue.remove('q1')).toBe(false)
      await store.deleteThread(thread.id)
      expect(await store.queue.list(thread.id)).toEqual([])
      expect(await store.queue.get('q2')).toBeNull()
      expect(await store.queue.threadsWithItems(10)).toEqual([other.id])
    })

    it('keeps a workflow run\'s steers in the run\'s own queue, each naming its step, edits keeping it', async () => {
      const steer = { id: 'w1', threadId: 'run:job-9', userId: 'a', content: 'focus on prices', model: 'workflow', position: 1, createdAt: 1, updatedAt: 1, steerJobId: 'job-9', steerNodeId: 'research' }
      await store.queue.add(steer)
      expect(await store.queue.list('run:job-9')).toEqual([steer])
      expect(await store.queue.update('w1', { content: 'focus on prices only' }, 2)).toBe(true)
      expect(await store.queue.get('w1')).toMatchObject({ content: 'focus on prices only', steerJobId: 'job-9', steerNodeId: 'research' })
      expect(await store.queue.remove('w1')).toBe(true)
      expect(await store.queue.list('run:job-9')).toEqual([])
    })

    it('keeps what was sent to a running answer with the message it wrote', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const answer = await store.appendMessage({ threadId: thread.id, role: 'assistant', content: '', model: 'm', status: 'streaming', now: 2 })
      const steers = [{ id: 's1', content: 'use what you have', round: 2, contentOffset: 14, at: 3 }]
      expect(await store.updateMessage(answer.id, { status: 'complete', content: 'Searching… Done.', steers })).toBe(true)
      expect((await store.getMessage(answer.id))?.steers).toEqual(steers)
      expect((await store.listMessages(thread.id))[0]?.steers).toEqual(steers)
    })

    it('keeps the images an answer made as its files', async () => {
      const thread = await store.createThread({ userId: 'a', now: 1 })
      const answer = await store.appendMessage({ threadId: thread.id, role: 'assistant', content: '', model: 'm', status: 'streaming', now: 2 })
      const attachments = [{ id: 'img_1', name: 'sunset.png', mediaType: 'image/png', kind: 'image' as const, size: 12 }]
      expect(await store.updateMessage(answer.id, { status: 'complete', content: 'Here.', attachments })).toBe(true)
      expect((await store.getMessage(answer.id))?.attachments).toEqual(attachments)
      // A later write without them leaves them.
      expect(await store.updateMessage(answer.id, { content: 'Here it is.' })).toBe(true)
      expect((await store.listMessages(thread.id))[0]?.attachments).toEqual(attachments)
    })
  })
}
