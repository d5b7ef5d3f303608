/** A person's settings, chat request shape, share links and feedback report, on the memory stores. */
import { describe, expect, it } from 'vitest'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { PersonalSettings } from '../../../server/lib/threads/personal-settings'
import { ShareLinks } from '../../../server/lib/threads/share-links'
import { chatRequestShape } from '../../../server/lib/threads/chat-request'
import { AnswerFeedback, feedbackReport } from '../../../server/lib/threads/feedback'
import { PERSONAL_LIMITS } from '../../../shared/types/personal'

const quotas = { threadsPerUser: 100, messagesPerThread: 50, workflowsPerUser: 10, attachmentBytesPerUser: 100 }

function setUp() {
  const settings = createMemoryAccountBackend()
  const threads = createMemoryThreadStore()
  const shares = new ShareLinks({ settings, threads, secretBox: createSecretBox('a-secret-for-the-share-links-test', 'share-links'), quotas, nameOf: async () => 'Ada' })
  return { settings, threads, shares, personal: new PersonalSettings(settings) }
}

async function finishedConversation(threads: ReturnType<typeof createMemoryThreadStore>, userId = 'ada') {
  const thread = await threads.createThread({ userId, title: 'Knots', now: 1 })
  const question = await threads.appendMessage({ threadId: thread.id, parentId: thread.id, role: 'user', content: 'Which knot?', now: 2, attachments: [{ id: 'f1', name: 'rope.txt', mediaType: 'text/plain', kind: 'text', size: 4 }] })
  await threads.addAttachment({ attachment: { id: 'f1', name: 'rope.txt', mediaType: 'text/plain', kind: 'text', size: 4 }, bytes: new TextEncoder().encode('rope'), threadId: thread.id, userId })
  const answer = await threads.appendMessage({ threadId: thread.id, parentId: question.id, role: 'assistant', content: 'A bowline.', status: 'complete', model: 'm', now: 3 })
  return { thread: (await threads.getThread(thread.id))!, question, answer }
}

describe('chatRequestShape', () => {
  it('takes the chat\'s prompt over the person\'s instructions, and names only the fields set', () => {
    expect(chatRequestShape(undefined, undefined)).toEqual({ fields: {} })
    expect(chatRequestShape(undefined, { instructions: '  Be brief.  ' })).toEqual({ systemPrompt: 'Be brief.', fields: {} })
    expect(chatRequestShape({ systemPrompt: 'In French.', temperature: 0, topP: 1, maxTokens: 10, reasoningEffort: 'low' }, { instructions: 'Be brief.' })).toEqual({
      systemPrompt: 'In French.', fields: { temperature: 0, top_p: 1, max_tokens: 10, reasoning: { effort: 'low' } },
    })
    expect(chatRequestShape({ systemPrompt: '   ' }, { instructions: 'Be brief.' }).systemPrompt).toBe('Be brief.')
    // The team's instructions first, whatever the chat says; the memories last.
    expect(chatRequestShape({ systemPrompt: 'In French.' }, { instructions: 'Be brief.', team: 'Cite the handbook.', memories: 'Likes tea' }).systemPrompt).toBe('Cite the handbook.\n\nIn French.\n\nLikes tea')
  })
})

describe('PersonalSettings', () => {
  it('keeps folders and presets per person, within their limits, and forgets a deleted person', async () => {
    const { personal } = setUp()
    const folder = await personal.createFolder('ada', 'Boats', 5)
    expect(await personal.folders('ada')).toEqual([{ id: folder.id, name: 'Boats', createdAt: 5 }])
    expect(await personal.hasFolder('bob', folder.id)).toBe(false)
    await expect(personal.renameFolder('bob', folder.id, 'Mine')).rejects.toMatchObject({ statusCode: 404 })
    // Changes at once are applied one after the other: none is lost.
    await Promise.all(Array.from({ length: 10 }, (_, index) => personal.createFolder('ada', `F${index}`)))
    expect(await personal.folders('ada')).toHaveLength(11)
    for (let index = 0; index < PERSONAL_LIMITS.presetsPerUser; index++) await personal.savePreset('ada', { name: `P${index}`, settings: {} })
    await expect(personal.savePreset('ada', { name: 'One too many', settings: {} })).rejects.toMatchObject({ statusCode: 409, message: expect.stringMatching(/Delete one first/) })
    await personal.setPreferences('ada', { customInstructions: 'Brief.' })
    await personal.deleteUser('ada')
    expect(await personal.folders('ada')).toEqual([])
    expect(await personal.presets('ada')).toEqual([])
    expect(await personal.preferences('ada')).toEqual({})
  })
})

describe('ShareLinks', () => {
  it('opens the snapshot by its token only, stores no token in the clear, and refuses what it cannot show', async () => {
    const { shares, threads, settings } = setUp()
    const { thread } = await finishedConversation(threads)
    await expect(shares.create(await threads.createThread({ userId: 'ada' }), { includeAttachments: false, origin: 'https://chat.example' })).rejects.toMatchObject({ statusCode: 400 })
    const link = await shares.create(thread, { includeAttachments: false, origin: 'https://chat.example' })
    const token = link.url.split('/share/')[1]!
    expect(link.url).toMatch(/^https:\/\/chat\.example\/share\/[\w-]{32}$/)
    expect(await settings.getSetting(`share:${link.id}`)).not.toContain(token)
    const viewer = { id: 'bob', role: 'user' as const }
    expect((await shares.view(token, viewer)).messages.map(message => message.content)).toEqual(['Which knot?', 'A bowline.'])
    expect((await shares.view(token, viewer)).messages[0]).not.toHaveProperty('attachments')
    await expect(shares.attachment(token, 'f1', viewer)).rejects.toMatchObject({ statusCode: 404 })
    for (const bad of ['', 'x'.repeat(32), `${token}x`, '../../etc/passwd', token.toUpperCase()]) {
      if (bad === token) continue
      await expect(shares.view(bad, viewer), bad).rejects.toMatchObject({ statusCode: 404 })
    }
    // Guests and nobody: accounts only until the admin opens links.
    await expect(shares.view(token, null)).rejects.toMatchObject({ statusCode: 401 })
    await expect(shares.view(token, { id: 'g', role: 'guest' })).rejects.toMatchObject({ statusCode: 401 })
    await shares.setOpenToAnyone(true)
    expect((await shares.view(token, null)).sharedBy).toBe('Ada')
  })

  it('leaves answers still streaming and later turns out, copies with files when included, within the viewer\'s quota', async () => {
    const { shares, threads } = setUp()
    const { thread, answer } = await finishedConversation(threads)
    const next = await threads.appendMessage({ threadId: thread.id, parentId: answer.id, role: 'user', content: 'And then?', now: 4 })
    await threads.appendMessage({ threadId: thread.id, parentId: next.id, role: 'assistant', content: 'Half', status: 'streaming', now: 5 })
    const link = await shares.create((await threads.getThread(thread.id))!, { includeAttachments: true, origin: '' })
    const token = link.url.split('/share/')[1]!
    expect(link.messageCount).toBe(3)
    await threads.appendMessage({ threadId: thread.id, role: 'user', content: 'Later', now: 9 })
    const viewer = { id: 'bob', role: 'user' as const }
    expect((await shares.view(token, viewer)).messages.map(message => message.content)).toEqual(['Which knot?', 'A bowline.', 'And then?'])
    expect(new TextDecoder().decode((await shares.attachment(token, 'f1', viewer)).bytes)).toBe('rope')
    const copy = await shares.copy(token, viewer)
    const copied = await threads.listMessages(copy.id)
    expect(copied.map(message => [message.role, message.content])).toEqual([['user', 'Which knot?'], ['assistant', 'A bowline.'], ['user', 'And then?']])
    expect(copied[0]!.attachments![0]!.id).not.toBe('f1')
    expect(await threads.attachmentBytes('bob')).toBe(4)
    // Over the viewer's file quota: nothing is copied.
    await threads.addAttachment({ attachment: { id: 'big', name: 'big.txt', mediaType: 'text/plain', kind: 'text', size: 99 }, bytes: new Uint8Array(99), threadId: copy.id, userId: 'bob' })
    const before = (await threads.listThreads('bob')).length
    await expect(shares.copy(token, viewer)).rejects.toMatchObject({ name: 'StorageQuotaError' })
    expect(await threads.listThreads('bob')).toHaveLength(before)
  })

  it('revokes one link, every link of a conversation, and every link of a person, and lists only the owner\'s', async () => {
    const { shares, threads } = setUp()
    const { thread } = await finishedConversation(threads)
    const first = await shares.create(thread, { includeAttachments: false, origin: '' })
    const second = await shares.create(thread, { includeAttachments: false, origin: '' })
    expect((await shares.list('ada', '')).map(link => link.id)).toEqual([second.id, first.id])
    expect(await shares.list('bob', '')).toEqual([])
    expect(await shares.revoke('bob', first.id)).toBe(false)
    expect(await shares.revoke('ada', first.id)).toBe(true)
    await expect(shares.view(first.url.split('/share/')[1]!, { id: 'bob', role: 'user' })).rejects.toMatchObject({ statusCode: 404 })
    await shares.revokeThread('ada', thread.id)
    expect(await shares.list('ada', '')).toEqual([])
    const third = await shares.create(thread, { includeAttachments: false, origin: '' })
    await shares.deleteUser('ada')
    await expect(shares.view(third.url.split('/share/')[1]!, { id: 'bob', role: 'user' })).rejects.toMatchObject({ statusCode: 404 })
  })
})

describe('ShareLinks limit', () => {
  it('refuses a link past the limit, where an entry whose link is gone does not count', async () => {
    const { shares, threads, settings } = setUp()
    const { thread } = await finishedConversation(threads)
    const made = []
    for (let index = 0; index < PERSONAL_LIMITS.sharesPerUser; index++) made.push(await shares.create(thread, { includeAttachments: false, origin: '' }))
    await expect(shares.create(thread, { includeAttachments: false, origin: '' })).rejects.toMatchObject({ statusCode: 409 })
    // A link lost between its two writes (its record gone, its index entry left).
    await settings.deleteSettings(`share:${made[0]!.id}`)
    expect((await shares.list('ada', ''))).toHaveLength(PERSONAL_LIMITS.sharesPerUser - 1)
    await shares.create(thread, { includeAttachments: false, origin: '' })
    expect((await shares.list('ada', ''))).toHaveLength(PERSONAL_LIMITS.sharesPerUser)
  })
})

describe('feedback', () => {
  it('rates only finished answers of the thread, and reports counts per model and day with the latest 👎', async () => {
    const { threads } = setUp()
    const { thread, question, answer } = await finishedConversation(threads)
    const feedback = new AnswerFeedback(threads)
    await expect(feedback.rate(thread, question.id, { rating: 'up' })).rejects.toMatchObject({ statusCode: 400 })
    const other = await threads.createThread({ userId: 'ada' })
    await expect(feedback.rate(other, answer.id, { rating: 'up' })).rejects.toMatchObject({ statusCode: 404 })
    expect((await feedback.rate(thread, answer.id, { rating: 'down', reason: 'Too long' }, Date.UTC(2026, 10, 25, 12))).feedback).toEqual({ rating: 'down', reason: 'Too long', at: Date.UTC(2026, 10, 25, 12) })
    const report = feedbackReport([
      { model: 'b', rating: 'up', at: Date.UTC(2026, 10, 26, 1) },
      { model: 'a', rating: 'down', reason: 'Wrong', at: Date.UTC(2026, 10, 26, 0) },
      { model: 'a', rating: 'up', at: Date.UTC(2026, 10, 25, 23) },
      { model: 'a', rating: 'down', at: Date.UTC(2026, 10, 25, 22) },
    ])
    expect(report.byModelAndDay).toEqual([
      { model: 'a', day: '2026-11-26', up: 0, down: 1 },
      { model: 'b', day: '2026-11-26', up: 1, down: 0 },
      { model: 'a', day: '2026-11-25', up: 1, down: 1 },
    ])
    expect(report.recentDown).toEqual([{ model: 'a', reason: 'Wrong', at: Date.UTC(2026, 10, 26, 0) }, { model: 'a', at: Date.UTC(2026, 10, 25, 22) }])
    expect((await feedback.report(30, Date.UTC(2026, 10, 26))).recentDown).toEqual([{ model: 'm', reason: 'Too long', at: Date.UTC(2026, 10, 25, 12) }])
  })
})
