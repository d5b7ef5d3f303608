import { describe, expect, it } from 'vitest'
import { branchEnd, messageTree, sideBySideAnswerId, threadPath, UNSTARTED_AFTER_MS, viewThread } from '../../../server/lib/threads/versions'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import type { ChatThread, ThreadMessage } from '../../../shared/types/thread'

const thread: ChatThread = { id: 't', userId: 'u', title: 'T', createdAt: 0, updatedAt: 0 }
let clock = 0
function message(id: string, role: ThreadMessage['role'], parentId?: string): ThreadMessage {
  return { id, threadId: 't', role, content: id, createdAt: ++clock, ...(parentId ? { parentId } : {}) }
}

// q1 → a1 → q2 → a2, then a1 answered again (a1b), then q2 edited (q2b → a2b) on the first branch.
const tree = [
  message('q1', 'user', 't'), message('a1', 'assistant', 'q1'), message('q2', 'user', 'a1'), message('a2', 'assistant', 'q2'),
  message('a1b', 'assistant', 'q1'),
  message('q2b', 'user', 'a1'), message('a2b', 'assistant', 'q2b'),
]
const ids = (messages: { id: string }[]) => messages.map(entry => entry.id)

describe('message versions', () => {
  it('shows the newest branch with each message\'s versions, oldest first', () => {
    const path = threadPath(thread, tree)
    expect(ids(path)).toEqual(['q1', 'a1', 'q2b', 'a2b'])
    expect(path[0]!.versions).toBeUndefined()
    expect(path[1]!.versions).toEqual({ ids: ['a1', 'a1b'], index: 0 })
    expect(path[2]!.versions).toEqual({ ids: ['q2', 'q2b'], index: 1 })
    expect(path[3]!.versions).toBeUndefined()
  })

  it('shows the branch the person picked, and a picked version ends at its newest descendant', () => {
    const messages = messageTree('t', tree)
    expect(branchEnd(messages, 'q2')).toBe('a2')
    expect(branchEnd(messages, 'a1')).toBe('a2b')
    expect(branchEnd(messages, 'a1b')).toBe('a1b')
    expect(ids(threadPath({ ...thread, activeMessageId: 'a2' }, tree))).toEqual(['q1', 'a1', 'q2', 'a2'])
    expect(ids(threadPath({ ...thread, activeMessageId: 'a1b' }, tree))).toEqual(['q1', 'a1b'])
    // A picked message that is gone falls back to the newest branch.
    expect(ids(threadPath({ ...thread, activeMessageId: 'deleted' }, tree))).toEqual(['q1', 'a1', 'q2b', 'a2b'])
  })

  it('reads messages stored before versions (no parent) as the single branch they were', () => {
    const legacy = [message('x1', 'user'), message('x2', 'assistant'), message('x3', 'user'), message('x4', 'assistant')]
    expect(ids(threadPath(thread, legacy))).toEqual(['x1', 'x2', 'x3', 'x4'])
    // A new answer to x3 stored with versions is a sibling of x4.
    const path = threadPath(thread, [...legacy, message('x4b', 'assistant', 'x3')])
    expect(ids(path)).toEqual(['x1', 'x2', 'x3', 'x4b'])
    expect(path[3]!.versions).toEqual({ ids: ['x4', 'x4b'], index: 1 })
  })

  it('ends on a corrupt store whose parents form a loop', () => {
    const looped = [message('l1', 'user', 'l2'), message('l2', 'assistant', 'l1')]
    expect(ids(threadPath(thread, looped)).length).toBeLessThanOrEqual(3)
    expect(branchEnd(messageTree('t', looped), 'l1')).toBeTypeOf('string')
  })

  it('switches the branch on view in the store, and refuses a message of another thread', async () => {
    const store = createMemoryThreadStore()
    const stored = await store.createThread({ userId: 'u' })
    const question = await store.appendMessage({ threadId: stored.id, parentId: stored.id, role: 'user', content: 'q', now: 1 })
    const first = await store.appendMessage({ threadId: stored.id, parentId: question.id, role: 'assistant', content: 'first', now: 2 })
    const second = await store.appendMessage({ threadId: stored.id, parentId: question.id, role: 'assistant', content: 'second', now: 3 })
    expect(ids((await viewThread(store, stored)).messages)).toEqual([question.id, second.id])
    const shown = await viewThread(store, stored, first.id)
    expect(ids(shown.messages)).toEqual([question.id, first.id])
    expect(shown.messages[1]!.versions).toEqual({ ids: [first.id, second.id], index: 0 })
    expect((await store.getThread(stored.id))!.activeMessageId).toBe(first.id)
    await expect(viewThread(store, stored, 'elsewhere')).rejects.toMatchObject({ name: 'MessageVersionError', statusCode: 404 })
  })

  it('shows answers given side by side with the last of them, by the turn their ids share (not by when they were made)', () => {
    const turn = crypto.randomUUID()
    const [a, b] = [sideBySideAnswerId(turn, 0), sideBySideAnswerId(turn, 1)]
    const messages = [message('q', 'user', 't'), message(a, 'assistant', 'q'), message(b, 'assistant', 'q'), message('again', 'assistant', 'q')]
    const onFirst = threadPath({ ...thread, activeMessageId: a }, messages)
    expect(ids(onFirst.at(-1)!.sideBySide!)).toEqual([a, b])
    expect(onFirst.at(-1)!.versions).toEqual({ ids: [a, b, 'again'], index: 0 })
    // An answer asked for again a millisecond later is a version, not a column.
    expect(threadPath({ ...thread, activeMessageId: 'again' }, messages).at(-1)!.sideBySide).toBeUndefined()
    // Only the branch's last answer carries them.
    expect(threadPath({ ...thread, activeMessageId: 'q2' }, [...messages, message('q2', 'user', a)]).find(entry => entry.id === a)!.sideBySide).toBeUndefined()
  })

  it('marks an answer stored without its job for over a minute as never started (a crash between the two), in the store too', async () => {
    const store = createMemoryThreadStore()
    const stored = await store.createThread({ userId: 'u' })
    const question = await store.appendMessage({ threadId: stored.id, parentId: stored.id, role: 'user', content: 'q', now: 1_000 })
    const orphan = await store.appendMessage({ threadId: stored.id, parentId: question.id, role: 'assistant', content: '', status: 'streaming', now: 1_001 })
    const running = await store.appendMessage({ threadId: stored.id, parentId: question.id, role: 'assistant', content: '', status: 'streaming', jobId: 'job-1', now: 1_002 })
    const fresh = await store.appendMessage({ threadId: stored.id, parentId: question.id, role: 'assistant', content: '', status: 'streaming', now: 1_000 + UNSTARTED_AFTER_MS })
    const shown = await viewThread(store, { ...stored, activeMessageId: orphan.id }, undefined, 1_002 + UNSTARTED_AFTER_MS)
    expect(shown.messages.at(-1)).toMatchObject({ id: orphan.id, status: 'error', error: { message: expect.stringMatching(/never started/) } })
    const kept = await store.listMessages(stored.id)
    expect(kept.find(entry => entry.id === orphan.id)).toMatchObject({ status: 'error' })
    expect(kept.find(entry => entry.id === running.id)).toMatchObject({ status: 'streaming' })
    expect(kept.find(entry => entry.id === fresh.id)).toMatchObject({ status: 'streaming' })
  })
})
