import { unzipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { conversationMarkdown, PersonalArchives } from '../../../server/lib/auth/personal-archive'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { createMemoryWorkflowStore } from '../../../server/lib/stores/workflows/memory'
import { createMemoryWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-memory'
import { PersonalSettings } from '../../../server/lib/threads/personal-settings'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import { createMemoryWorkspaceStore } from '../../../server/lib/stores/workspaces/memory'
import { Workspaces } from '../../../server/lib/tools/workspace/workspaces'
import { UserTools } from '../../../server/lib/tools/user-tools/user-tools'
import { Memories } from '../../../server/lib/tools/memory/memories'
import { KnowledgeBases } from '../../../server/lib/knowledge/knowledge-bases'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'

async function setUp() {
  const accounts = createMemoryAccountBackend()
  const threads = createMemoryThreadStore()
  const workflows = createMemoryWorkflowStore()
  const personal = new PersonalSettings(accounts)
  const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e6, filesPerUser: 100, fileBytes: 1e5 })
  const userTools = new UserTools(accounts)
  const memories = new Memories(accounts, { enabled: true, perPerson: 10, promptChars: 1_000 })
  const knowledge = new KnowledgeBases(createMemoryKnowledgeStore(), createMemoryWorkspaceStore(), { enabled: true, fileBytes: 1e6, basesPerPerson: 5, perOwner: async () => ({ documents: 10, bytes: 1e7, passages: 1e5 }) }, async () => [])
  const ann = (await accounts.createAccount({ name: 'Ann', passwordHash: 'x', role: 'user' }))!
  const bob = (await accounts.createAccount({ name: 'Bob', passwordHash: 'x', role: 'user' }))!
  for (const [who, words] of [[ann.id, 'sailing'], [bob.id, 'gardening']] as const) {
    const thread = await threads.createThread({ userId: who, title: `About ${words}` })
    const question = await threads.appendMessage({ threadId: thread.id, role: 'user', content: `Tell me about ${words}`, attachments: [{ id: `file-${words}`, name: `${words}.png`, mediaType: 'image/png', kind: 'image', size: 3 }] })
    await threads.addAttachment({ attachment: { id: `file-${words}`, name: `${words}.png`, mediaType: 'image/png', kind: 'image', size: 3 }, bytes: new Uint8Array([1, 2, 3]), threadId: thread.id, userId: who })
    await threads.appendMessage({ threadId: thread.id, role: 'assistant', content: `All about ${words}.`, parentId: question.id })
    await workflows.createWorkflow({ userId: who, definition: { ...WORKFLOW_EXAMPLES['triage-router']!, name: `Flow of ${words}` } })
    await workspaces.write(workspaces.forThread(thread.id), who, `notes/${words}.md`, `# ${words}`)
    await userTools.propose(who, { name: `${words}_tool`, description: `About ${words}.`, code: `"${words}"` })
    await memories.add(who, { text: `Likes ${words}`, source: 'person' })
    const base = await knowledge.create(who, { name: `Notes on ${words}` })
    await knowledge.addDocument(who, base.id, { name: `${words}.md`, bytes: new TextEncoder().encode(`# ${words} handbook`) })
  }
  await personal.setPreferences(ann.id, { displayName: 'Captain Ann' })
  await accounts.linkIdentity({ provider: 'corp', subject: 'ann-at-corp', accountId: ann.id, email: 'ann@corp.example', now: Date.UTC(2026, 10, 1) })
  await accounts.linkIdentity({ provider: 'corp', subject: 'bob-at-corp', accountId: bob.id, email: 'bob@corp.example', now: Date.UTC(2026, 10, 1) })
  const archives = new PersonalArchives({ accounts, identities: accounts, passkeys: { list: async () => [{ id: 'credential-id', name: 'Work laptop', createdAt: Date.UTC(2026, 10, 2), synced: true }] }, threads, workflows, workflowRuns: createMemoryWorkflowRunStore(), personal, workspaces, userTools, memories, knowledge, maxThreads: 1_000 })
  return { archives, ann, bob }
}

const read = async (stream: ReadableStream<Uint8Array>) => unzipSync(new Uint8Array(await new Response(stream).arrayBuffer()))
const decode = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)

describe('a person\'s archive', () => {
  it('holds their account, settings, conversations with their files and workspaces, their own tools, and workflows, and nothing of anyone else\'s', async () => {
    const { archives, ann } = await setUp()
    const files = await read(archives.open(ann.id, new Date(Date.UTC(2026, 10, 26))))
    const names = Object.keys(files).sort()
    expect(names.filter(name => !name.startsWith('conversations/') && !name.startsWith('workflows/') && !name.startsWith('knowledge/'))).toEqual(['README.txt', 'account.json', 'memory.json', 'tools.json', 'workflow-runs.json'])
    const baseFile = names.find(name => /^knowledge\/notes-on-sailing-kb-[\w-]+\/knowledge-base\.json$/.test(name))!
    expect(JSON.parse(decode(files[baseFile]))).toMatchObject({ base: { name: 'Notes on sailing' }, documents: [{ name: 'sailing.md', status: 'queued' }] })
    expect(decode(files[baseFile.replace('knowledge-base.json', 'files/sailing.md')])).toBe('# sailing handbook')
    expect(decode(files[names.find(name => name.endsWith('/workspace/notes/sailing.md'))!])).toBe('# sailing')
    expect(JSON.parse(decode(files['tools.json']))).toEqual([expect.objectContaining({ name: 'sailing_tool', code: '"sailing"' })])
    expect(JSON.parse(decode(files['memory.json']))).toEqual({ enabled: false, memories: [expect.objectContaining({ text: 'Likes sailing', source: 'person' })] })
    expect(JSON.parse(decode(files['account.json']))).toMatchObject({ account: { name: 'Ann', role: 'user' }, preferences: { displayName: 'Captain Ann' }, signInProviders: [{ provider: 'corp', subject: 'ann-at-corp', email: 'ann@corp.example', linkedAt: '2026-11-01T00:00:00.000Z' }], passkeys: [{ name: 'Work laptop', synced: true, addedAt: '2026-11-02T00:00:00.000Z', lastUsedAt: null }] })
    const markdown = names.find(name => name.endsWith('conversation.md'))!
    expect(markdown).toMatch(/^conversations\/\d{4}-\d{2}-\d{2}-about-sailing-[\w-]+\/conversation\.md$/)
    expect(decode(files[markdown])).toContain('Tell me about sailing')
    expect([...files[names.find(name => name.endsWith('sailing.png'))!]!]).toEqual([1, 2, 3])
    expect(names.some(name => name.startsWith('workflows/flow-of-sailing-'))).toBe(true)
    expect(Object.values(files).map(decode).join('\n')).not.toMatch(/gardening|Bob/)
  })

  it('makes one at a time per person: a second is refused while the first is read, and allowed once it ended or was abandoned', async () => {
    const { archives, ann, bob } = await setUp()
    const first = archives.open(ann.id)
    expect(() => archives.open(ann.id)).toThrow(/already being exported/)
    // Another person is not held up.
    await read(archives.open(bob.id))
    await read(first)
    const abandoned = archives.open(ann.id)
    await abandoned.cancel()
    await read(archives.open(ann.id))
  })

  it('writes a conversation as Markdown, marking another version of an answer', () => {
    const at = Date.UTC(2026, 0, 1)
    const markdown = conversationMarkdown('Plans', [
      { id: 'q', threadId: 't', role: 'user', content: 'Where to?', createdAt: at },
      { id: 'a1', threadId: 't', role: 'assistant', content: 'Paris.', createdAt: at + 1, parentId: 'q', model: 'm' },
      { id: 'a2', threadId: 't', role: 'assistant', content: 'Rome.', createdAt: at + 2, parentId: 'q', model: 'm' },
    ])
    expect(markdown).toBe('# Plans\n\n## You — 2026-01-01T00:00:00.000Z\n\nWhere to?\n\n## Assistant (m) — 2026-01-01T00:00:00.001Z\n\nParis.\n\n## Assistant (m) (another version) — 2026-01-01T00:00:00.002Z\n\nRome.\n')
  })
})
