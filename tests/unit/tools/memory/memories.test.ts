/**
 * Memory: a person's switch and memories (bounded, theirs alone, alike from two instances at
 * once), the tools the model uses (a `remember` repeated after a crash is one memory), the gate
 * that keeps the tools from a person with memory off, and what an answer's instructions say.
 */
import { describe, expect, it } from 'vitest'
import { Memories, searchMemories } from '../../../../server/lib/tools/memory/memories'
import { memoryTools, withMemoryGate } from '../../../../server/lib/tools/memory/memory-tools'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'
import { MEMORY_MAX_CHARS, type Memory } from '../../../../shared/types/memory'
import type { ServerToolModule } from '../../../../server/lib/tools/define-tool'
import type { ToolExecutionContext } from '../../../../server/lib/tools/tool-types'

const settings = { enabled: true, perPerson: 5, promptChars: 2_000 }

function tools(memories: Memories): Record<string, ServerToolModule> {
  return Object.fromEntries(memoryTools(memories).map(tool => [tool.definition.function.name, tool]))
}

function call(tool: ServerToolModule, args: Record<string, unknown>, context: Partial<ToolExecutionContext> = {}): Promise<any> {
  return Promise.resolve(tool.handler(args, { userId: 'ann', threadId: 't1', jobId: 'job-1', toolCallId: 'call-1', credentials: { get: () => undefined }, ...context } as ToolExecutionContext))
}

describe('a person\'s memories', () => {
  it('keeps them only while memory is on, bounded in length and number, and refuses what would not fit with what to do', async () => {
    const memories = new Memories(createMemoryAccountBackend(), settings)
    await expect(memories.add('ann', { text: 'Likes tea', source: 'assistant', threadId: 't', callKey: 'a' })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('Settings → Memory') })
    await memories.setEnabled('ann', true)
    const { memory } = await memories.add('ann', { text: '  Likes   green tea ', source: 'assistant', threadId: 't', callKey: 'a' })
    expect(memory).toMatchObject({ text: 'Likes green tea', source: 'assistant', threadId: 't' })
    // The same text again is the memory already kept.
    expect(await memories.add('ann', { text: 'likes green tea', source: 'person' })).toMatchObject({ added: false, memory: { id: memory.id } })
    await expect(memories.add('ann', { text: 'x'.repeat(MEMORY_MAX_CHARS + 1), source: 'person' })).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining(`at most ${MEMORY_MAX_CHARS}`) })
    await expect(memories.add('ann', { text: '   ', source: 'person' })).rejects.toMatchObject({ statusCode: 400 })
    for (const text of ['a1', 'b2', 'c3', 'd4']) await memories.add('ann', { text, source: 'person' })
    await expect(memories.add('ann', { text: 'one too many', source: 'person' })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('Forget some first') })
    // Off keeps them; another person sees none of them.
    await memories.setEnabled('ann', false)
    expect((await memories.view('ann')).memories).toHaveLength(5)
    expect(await memories.view('bob')).toEqual({ enabled: false, memories: [] })
    expect(await memories.remove('bob', [memory.id])).toEqual([])
    await expect(memories.update('bob', memory.id, 'mine now')).rejects.toMatchObject({ statusCode: 404 })
  })

  it('changes, deletes and clears them, and goes with the account', async () => {
    const store = createMemoryAccountBackend()
    const memories = new Memories(store, settings)
    const { memory } = await memories.add('ann', { text: 'Lives in Lisbon', source: 'person' })
    expect(await memories.update('ann', memory.id, 'Lives in Porto')).toMatchObject({ id: memory.id, text: 'Lives in Porto' })
    await memories.add('ann', { text: 'Has a cat', source: 'person' })
    expect((await memories.remove('ann', [memory.id])).map(gone => gone.text)).toEqual(['Lives in Porto'])
    expect(await memories.clear('ann')).toBe(1)
    await memories.add('ann', { text: 'Back again', source: 'person' })
    await memories.add('ann2', { text: 'Someone else', source: 'person' })
    await memories.deleteUser('ann')
    expect((await memories.view('ann')).memories).toEqual([])
    // An id that starts with the deleted one's is another person's, and stays.
    expect((await memories.view('ann2')).memories).toHaveLength(1)
  })

  it('loses nothing when two instances change one person\'s memories at once', async () => {
    const store = createMemoryAccountBackend()
    const one = new Memories(store, { ...settings, perPerson: 100 })
    const two = new Memories(store, { ...settings, perPerson: 100 })
    await one.setEnabled('ann', true)
    await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 ? one : two).add('ann', { text: `fact ${index}`, source: 'person' })))
    expect((await one.view('ann')).memories).toHaveLength(20)
  })

  it('finds them by the words of a question, best match first, the newest without one', () => {
    const memory = (id: string, text: string, updatedAt: number): Memory => ({ id, text, source: 'person', createdAt: updatedAt, updatedAt })
    const kept = [memory('1', 'Their dog is called Rex', 1), memory('2', 'Their cat is called Tom', 2), memory('3', 'Works on the billing project', 3)]
    expect(searchMemories(kept, 'what is my dog called?', 5).map(found => found.id)).toEqual(['1', '2'])
    expect(searchMemories(kept, 'billing', 5).map(found => found.id)).toEqual(['3'])
    expect(searchMemories(kept, 'projects', 5).map(found => found.id)).toEqual([])
    expect(searchMemories(kept, 'project', 5).map(found => found.id)).toEqual(['3'])
    expect(searchMemories(kept, '', 2).map(found => found.id)).toEqual(['3', '2'])
    // A long query is read to a bound (the "dog" past it is not), and no pattern is made of it: no words, so the newest.
    expect(searchMemories(kept, `${'(a+)+$ '.repeat(10_000)}dog`, 5).map(found => found.id)).toEqual(['3', '2', '1'])
  })

  it('says the newest memories in an answer\'s instructions, within the bound, only while memory is on', async () => {
    const memories = new Memories(createMemoryAccountBackend(), { ...settings, promptChars: 80 })
    await memories.add('ann', { text: 'Prefers metric units', source: 'person' })
    expect(await memories.promptFor('ann')).toBeUndefined()
    await memories.setEnabled('ann', true)
    await memories.add('ann', { text: 'Their dog is called Rex', source: 'person' })
    const prompt = (await memories.promptFor('ann'))!
    expect(prompt).toContain('Their dog is called Rex')
    expect(prompt).not.toContain('Prefers metric units')
    expect(prompt).toContain('1 older memories')
    expect(await new Memories(createMemoryAccountBackend(), { ...settings, promptChars: 0 }).promptFor('ann')).toBeUndefined()
  })

  it('refuses to turn on for a guest, where the policy denies it, or with memory off on the server, saying why', async () => {
    const store = createMemoryAccountBackend()
    const memories = new Memories(store, settings, async userId => (userId === 'guest-1' ? { unavailable: 'guest' } : userId === 'bob' ? { unavailable: 'policy', reason: 'denied by the tool policy "no memory"' } : {}))
    await expect(memories.setEnabled('guest-1', true)).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('sign up') })
    await expect(memories.setEnabled('bob', true)).rejects.toMatchObject({ message: expect.stringContaining('no memory') })
    expect(await memories.viewFor('bob')).toMatchObject({ enabled: false, unavailable: 'policy', max: 5 })
    await memories.setEnabled('ann', true)
    expect(await memories.viewFor('ann')).toEqual({ enabled: true, memories: [], max: 5 })
    const off = new Memories(store, { ...settings, enabled: false })
    expect(await off.isEnabled('ann')).toBe(false)
    expect(await off.viewFor('ann')).toMatchObject({ unavailable: 'off' })
    await expect(off.setEnabled('ann', true)).rejects.toMatchObject({ message: expect.stringContaining('NUXT_TOOLS_MEMORY_ENABLED') })
  })
})

describe('the memory tools', () => {
  it('remember once per call, even when a crash makes the call run again', async () => {
    const memories = new Memories(createMemoryAccountBackend(), settings)
    await memories.setEnabled('ann', true)
    const { remember, recall, forget } = tools(memories)
    const first = await call(remember!, { text: 'Their dog is called Rex' })
    expect(first).toMatchObject({ remembered: 'Their dog is called Rex', alreadyKnown: false })
    // The same call again (the job resumed after a crash between the write and the result).
    expect(await call(remember!, { text: 'Their dog is called Rex' })).toMatchObject({ id: first.id, alreadyKnown: true })
    // Another call with other words is another memory.
    await call(remember!, { text: 'Drinks oat milk' }, { toolCallId: 'call-2' })
    expect((await memories.view('ann')).memories).toHaveLength(2)
    expect(await call(recall!, { query: 'dog' })).toMatchObject({ memories: [{ id: first.id, text: 'Their dog is called Rex' }], kept: 2 })
    expect(await call(forget!, { matching: 'dog rex' })).toEqual({ forgotten: ['Their dog is called Rex'] })
    expect(await call(forget!, { matching: 'dog rex' })).toEqual({ forgotten: [] })
    await expect(call(forget!, {})).rejects.toThrow(/Say which memories/)
    // Another person's call reaches only their own (empty) memory.
    expect(await call(recall!, {}, { userId: 'bob' })).toMatchObject({ memories: [], kept: 0 })
  })

  it('are denied, with a reason, to a person who has memory off, and the rest of the policy is kept', () => {
    const policy = Object.assign((tool: { name: string }) => (tool.name === 'web_fetch' ? 'denied by the policy' : undefined), { needsApproval: () => false })
    const gated = withMemoryGate(policy, false)
    expect(gated({ name: 'recall', capabilities: ['memory'] })).toContain('Settings → Memory')
    expect(gated({ name: 'web_fetch' })).toBe('denied by the policy')
    expect(gated({ name: 'calculate' })).toBeUndefined()
    expect(withMemoryGate(policy, true)({ name: 'recall', capabilities: ['memory'] })).toBeUndefined()
    expect(gated.needsApproval).toBe(policy.needsApproval)
  })
})
