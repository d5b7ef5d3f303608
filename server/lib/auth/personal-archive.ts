/**
 * "Export my data": everything a person keeps here as one zip, streamed (an entry is made only when
 * the reader has taken the previous one, so a slow download holds one conversation in memory, not
 * the archive): their account and settings, each conversation as JSON and as Markdown with its
 * files, their saved workflows with every kept version, and their workflow runs. Saved credentials
 * are not in it (their values are secrets this server never shows again). Another person's data
 * cannot get in: every read is by the person's own id.
 */
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate'
import type { AccountStore, IdentityStore } from '../stores/accounts/account-store'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { WorkflowStore } from '../stores/workflows/workflow-store'
import type { WorkflowRunStore } from '../stores/workflows/run-store'
import type { PersonalSettings } from '../threads/personal-settings'
import type { ThreadMessage } from '../../../shared/types/thread'
import { RefusalError } from '../domain-error'
import type { Workspaces } from '../tools/workspace/workspaces'
import type { UserTools } from '../tools/user-tools/user-tools'
import type { Memories } from '../tools/memory/memories'
import type { KnowledgeBases } from '../knowledge/knowledge-bases'
import type { Passkeys } from './passkeys'

/** Where a person's data is read from. */
export interface PersonalArchiveSources {
  accounts: Pick<AccountStore, 'getAccount'>
  /** The identity-provider sign-ins linked to the account. */
  identities: Pick<IdentityStore, 'listIdentities'>
  /** The account's passkeys (names and dates; their public keys are of no use elsewhere). */
  passkeys: Pick<Passkeys, 'list'>
  threads: ThreadStore
  workflows: WorkflowStore
  workflowRuns: WorkflowRunStore
  personal: PersonalSettings
  workspaces: Pick<Workspaces, 'forThread' | 'list' | 'read'>
  userTools: Pick<UserTools, 'list'>
  memories: Pick<Memories, 'view'>
  /** The knowledge bases they own, with their documents' files. */
  knowledge: Pick<KnowledgeBases, 'list' | 'documents' | 'readFile'>
  /** Conversations one archive holds at most (the per-person quota). */
  maxThreads: number
}

interface Entry {
  name: string
  data: Uint8Array
  /** Already compressed (images): stored as they are. */
  stored?: boolean
}

const text = (value: string) => new TextEncoder().encode(value)
const json = (value: unknown) => text(`${JSON.stringify(value, null, 2)}\n`)

/** A file name part from a title: lower-case letters, digits and dashes, at most 40. */
function slug(title: string): string {
  return title.normalize('NFKD').replace(/[\u0300-\u036F]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'untitled'
}

/** A conversation as Markdown: its title, then each message in the order it was written (other versions marked). */
export function conversationMarkdown(title: string, messages: readonly ThreadMessage[]): string {
  const lines = [`# ${title}`, '']
  const seenParents = new Set<string | undefined>()
  for (const message of messages) {
    const version = seenParents.has(message.parentId) && message.parentId !== undefined ? ' (another version)' : ''
    seenParents.add(message.parentId)
    const who = message.role === 'user' ? 'You' : `Assistant${message.model ? ` (${message.model})` : ''}`
    lines.push(`## ${who}${version} — ${new Date(message.createdAt).toISOString()}`, '')
    lines.push(message.content || '_(no text)_', '')
    for (const file of message.attachments ?? []) lines.push(`- ${message.role === 'user' ? 'Attached' : 'Made'}: [${file.name}](files/${file.id}-${file.name})`)
    if (message.attachments?.length) lines.push('')
  }
  return lines.join('\n')
}

/** The entries of `userId`'s archive, one conversation (or workflow) at a time. */
async function* archiveEntries(sources: PersonalArchiveSources, userId: string, now: Date): AsyncGenerator<Entry> {
  const account = await sources.accounts.getAccount(userId)
  yield {
    name: 'README.txt',
    data: text([
      `Your data from this chat server, exported ${now.toISOString()}.`,
      '',
      'account.json        your account (without its password) and your settings, chat presets and folders',
      'conversations/      each conversation as conversation.json (every message and version) and conversation.md, with its files and its workspace/',
      'tools.json          the tools your assistants wrote for you, with their code',
      'memory.json         what the assistant remembers about you, and whether memory is on',
      'knowledge/          each knowledge base you own: knowledge-base.json (its documents and sharing) and its files',
      'workflows/          each saved workflow with every kept version',
      'workflow-runs.json  your workflow runs still kept',
      '',
      'Saved credentials are not included: their values are never shown again. Enter them anew where you need them.',
      '',
    ].join('\n')),
  }
  yield {
    name: 'account.json',
    data: json({
      account: account ? { id: account.id, name: account.name, role: account.role, createdAt: new Date(account.createdAt).toISOString() } : { id: userId, guest: true },
      signInProviders: account ? (await sources.identities.listIdentities(userId)).map(identity => ({ provider: identity.provider, subject: identity.subject, email: identity.email, linkedAt: new Date(identity.createdAt).toISOString(), lastSignInAt: new Date(identity.lastSignInAt).toISOString() })) : [],
      passkeys: account ? (await sources.passkeys.list(userId)).map(key => ({ name: key.name, synced: key.synced, addedAt: new Date(key.createdAt).toISOString(), lastUsedAt: key.lastUsedAt ? new Date(key.lastUsedAt).toISOString() : null })) : [],
      preferences: await sources.personal.preferences(userId),
      presets: await sources.personal.presets(userId),
      folders: await sources.personal.folders(userId),
    }),
  }
  const threads = await sources.threads.listThreads(userId, { limit: sources.maxThreads })
  for (const thread of threads) {
    if (thread.userId !== userId) continue
    const messages = await sources.threads.listMessages(thread.id)
    const folder = `conversations/${new Date(thread.createdAt).toISOString().slice(0, 10)}-${slug(thread.title)}-${thread.id}`
    yield { name: `${folder}/conversation.json`, data: json({ thread, messages }) }
    yield { name: `${folder}/conversation.md`, data: text(conversationMarkdown(thread.title, messages)) }
    for (const attachment of messages.flatMap(message => message.attachments ?? [])) {
      const stored = await sources.threads.readAttachment(attachment.id)
      if (!stored || stored.userId !== userId) continue
      yield { name: `${folder}/files/${attachment.id}-${attachment.name.replace(/[/\\]/g, '_')}`, data: stored.bytes, stored: attachment.kind === 'image' }
    }
    // The workspace's files under their own (normal, relative) paths.
    const workspaceId = sources.workspaces.forThread(thread.id)
    for (const info of await sources.workspaces.list(workspaceId)) {
      yield { name: `${folder}/workspace/${info.path}`, data: (await sources.workspaces.read(workspaceId, info.path)).bytes }
    }
  }
  yield { name: 'tools.json', data: json(await sources.userTools.list(userId)) }
  yield { name: 'memory.json', data: json(await sources.memories.view(userId)) }
  yield* knowledgeEntries(sources.knowledge, userId)
  for (const workflow of await sources.workflows.listWorkflows(userId)) {
    const versions = []
    for (const summary of await sources.workflows.listWorkflowVersions(workflow.id)) versions.push(await sources.workflows.getWorkflowVersion(workflow.id, summary.version))
    yield { name: `workflows/${slug(workflow.name)}-${workflow.id}.json`, data: json({ workflow, versions: versions.filter(Boolean) }) }
  }
  const runs = []
  let after
  do {
    const page = await sources.workflowRuns.listRuns({ userId, limit: 100, after })
    runs.push(...page.runs)
    after = page.next
  } while (after)
  yield { name: 'workflow-runs.json', data: json(runs) }
}

/**
 * `userId`'s archive as a zip stream (see the file's comment); `onEnd` is told once it has been
 * read to its end, failed, or been cancelled (the reader went away).
 */
export function personalArchive(sources: PersonalArchiveSources, userId: string, now = new Date(), onEnd: () => void = () => {}): ReadableStream<Uint8Array> {
  const entries = archiveEntries(sources, userId, now)
  let zip: Zip
  let controller!: ReadableStreamDefaultController<Uint8Array>
  return new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController
      zip = new Zip((error, chunk, final) => {
        if (error) {
          onEnd()
          return controller.error(error)
        }
        controller.enqueue(chunk)
        if (final) {
          onEnd()
          controller.close()
        }
      })
    },
    // One entry per pull: the next is read from the stores once the reader wants more.
    async pull() {
      try {
        const next = await entries.next()
        if (next.done) return zip.end()
        const { name, data, stored } = next.value
        const file = stored ? new ZipPassThrough(name) : new ZipDeflate(name, { level: 6 })
        file.mtime = now
        zip.add(file)
        file.push(data, true)
      } catch (error) {
        zip.terminate()
        onEnd()
        controller.error(error)
      }
    },
    async cancel() {
      zip.terminate()
      onEnd()
      await entries.return(undefined)
    },
  })
}

/**
 * Exports of people's data, one at a time per person: an archive reads everything a person keeps,
 * so a second one asked for while the first is being downloaded is refused (409) rather than
 * doubling the work (a reload, a script).
 */
export class PersonalArchives {
  private readonly exporting = new Set<string>()

  constructor(private readonly sources: PersonalArchiveSources) {}

  /** `userId`'s archive; throws `RefusalError` (409) while their previous one is still being read. */
  open(userId: string, now = new Date()): ReadableStream<Uint8Array> {
    if (this.exporting.has(userId)) throw new RefusalError('Your data is already being exported (in another tab or download); wait for it to finish, then try again.', 409)
    this.exporting.add(userId)
    let ended = false
    return personalArchive(this.sources, userId, now, () => {
      if (ended) return
      ended = true
      this.exporting.delete(userId)
    })
  }
}

/** The knowledge bases `userId` owns (none when knowledge bases are off), each with its documents' files. */
async function* knowledgeEntries(knowledge: PersonalArchiveSources['knowledge'], userId: string): AsyncGenerator<Entry> {
  const list = await knowledge.list(userId).catch(() => undefined)
  for (const base of list?.bases ?? []) {
    if (base.access !== 'owner') continue
    const { documents } = await knowledge.documents(userId, base.id)
    const folder = `knowledge/${slug(base.name)}-${base.id}`
    const { access: _access, ...kept } = base
    yield { name: `${folder}/knowledge-base.json`, data: json({ base: kept, documents }) }
    for (const document of documents) {
      const bytes = await knowledge.readFile(document)
      if (bytes) yield { name: `${folder}/files/${document.name.replace(/[/\\]/g, '_')}`, data: bytes, stored: document.mediaType === 'application/pdf' || document.mediaType.includes('officedocument') }
    }
  }
}
