/**
 * Knowledge bases as people use them: their own and those shared with their groups, what each may
 * do with one (its owner everything; a group it is shared with to read, or to edit its documents),
 * adding a document (bounded by size, type and its owner's totals; the same file again is the
 * version already there, a changed one a new version indexed again), reading a document where a
 * citation points, and searching the bases a person may read. Indexing happens after, in the
 * background (indexer.ts).
 *
 * A document's file is kept in the workspace store, under its base (`knowledge:<base>`) and its
 * owner's key of its own (`knowledge:<owner>`), so it counts against the knowledge limits, not the
 * person's workspace quota.
 */
import { threadWorkspaceId } from '../tools/workspace/workspaces'
import { workspacePath } from '../tools/workspace/paths'
import { createHash } from 'node:crypto'
import { KNOWLEDGE_DESCRIPTION_MAX, KNOWLEDGE_FILE_TYPES, KNOWLEDGE_NAME_MAX, type KnowledgeBaseView, type KnowledgeFileType, type KnowledgeDocument, type KnowledgeDocumentView, type KnowledgeHit, type KnowledgeList, type KnowledgeShare } from '../../../shared/types/knowledge'
import { RefusalError } from '../domain-error'
import type { RoleLimits } from '../../../shared/types/limits'
import type { KnowledgeStore, StoredKnowledgeBase } from '../stores/knowledge/knowledge-store'
import type { WorkspaceStore } from '../stores/workspaces/workspace-store'
import { knowledgeFileTypeOf } from './read-document'
import { passageLink, sourceOf } from './passage-links'
import { PassageSearch } from './passage-search'

/** What one person may keep in the bases they own (their role's knowledge limits, or more from a group of theirs). */
export interface KnowledgeOwnerLimits {
  documents: number
  bytes: number
  passages: number
}

/** The knowledge limits among a person's limits. */
export function knowledgeLimitsOf(limits: Pick<RoleLimits, 'knowledgeDocuments' | 'knowledgeMegabytes' | 'knowledgePassages'>): KnowledgeOwnerLimits {
  return { documents: limits.knowledgeDocuments, bytes: limits.knowledgeMegabytes * 1024 * 1024, passages: limits.knowledgePassages }
}

export interface KnowledgeLimits {
  enabled: boolean
  fileBytes: number
  basesPerPerson: number
  /** What the owner of a base may keep. */
  perOwner: (ownerId: string) => Promise<KnowledgeOwnerLimits>
  /** Passages searched with a question and put into its instructions (0: none). */
  passagesUpFront?: number
}

/** What a base is called and said to be, and who it is shared with. */
export interface KnowledgeBaseInput {
  name: string
  description?: string
  sharedWith?: KnowledgeShare[]
}

/** How a base fetches a web page for a person (web_fetch's guard and count), and whether the tool policy lets them reach the internet. */
export interface KnowledgePages {
  fetch: (url: string, userId: string, maxBytes: number) => Promise<{ url: string, status: number, contentType: string, body: Uint8Array, truncated: boolean }>
  /** Why `userId` may not fetch from the internet (the policy's words), or undefined. */
  denial: (userId: string) => Promise<string | undefined>
}

/** The longest document name kept. */
const DOCUMENT_NAME_MAX = 200
/** Passages one read of a document returns. */
const PASSAGES_PER_READ = 50

const workspaceOf = (baseId: string) => `knowledge:${baseId}`
const fileOwnerKey = (ownerId: string) => `knowledge:${ownerId}`

export class KnowledgeBases {
  constructor(
    readonly store: KnowledgeStore,
    private readonly files: WorkspaceStore,
    readonly limits: KnowledgeLimits,
    private readonly groupsOf: (userId: string) => Promise<readonly string[]>,
    /** Told when a document waits to be indexed. */
    private readonly onQueued: () => void = () => {},
    private readonly extras: { pages?: KnowledgePages, now?: () => number, search?: PassageSearch } = {},
  ) {
    this.passages = extras.search ?? new PassageSearch(store)
  }

  /** How passages are searched (by words, and by meaning where an embeddings endpoint is set). */
  private readonly passages: PassageSearch

  private now(): number {
    return (this.extras.now ?? Date.now)()
  }

  private checkOn(): void {
    if (!this.limits.enabled) throw new RefusalError('Knowledge bases are off on this server (NUXT_KNOWLEDGE_ENABLED).', 404)
  }

  /** What `userId` may do with `base`, or undefined when it is not theirs to see. */
  private async accessOf(userId: string, base: StoredKnowledgeBase): Promise<KnowledgeBaseView['access'] | undefined> {
    if (base.ownerId === userId) return 'owner'
    if (base.sharedWith.length === 0) return undefined
    const mine = new Set((await this.groupsOf(userId)).map(group => group.toLowerCase()))
    const shares = base.sharedWith.filter(share => mine.has(share.group.toLowerCase()))
    if (shares.length === 0) return undefined
    return shares.some(share => share.access === 'edit') ? 'edit' : 'read'
  }

  /** `baseId` as `userId` sees it; 404 when it is not there or not theirs to see, 403 when they may not do what `needs` says. */
  async open(userId: string, baseId: string, needs: 'read' | 'edit' | 'owner' = 'read'): Promise<KnowledgeBaseView> {
    this.checkOn()
    const base = await this.store.getBase(baseId)
    const access = base ? await this.accessOf(userId, base) : undefined
    if (!base || !access) throw new RefusalError('There is no knowledge base by that id (it may have been deleted, or it is not shared with you).', 404)
    if (needs === 'owner' && access !== 'owner') throw new RefusalError('Only the owner of this knowledge base may change its name, sharing or delete it.', 403)
    if (needs === 'edit' && access === 'read') throw new RefusalError('This knowledge base is shared with you to read: ask its owner for edit access to add or delete documents.', 403)
    return { ...base, access }
  }

  /** The bases `userId` may read (theirs and those shared with their groups, by name), the groups they are in, and the largest file. */
  async list(userId: string): Promise<KnowledgeList> {
    this.checkOn()
    const groups = [...await this.groupsOf(userId)]
    const bases = await this.store.listBases({ ownerId: userId, groups })
    const views = await Promise.all(bases.map(async base => ({ ...base, access: (await this.accessOf(userId, base))! })))
    return { bases: views.filter(view => view.access), groups, fileBytes: this.limits.fileBytes }
  }

  async create(userId: string, input: KnowledgeBaseInput): Promise<KnowledgeBaseView> {
    this.checkOn()
    const owned = (await this.store.listBases({ ownerId: userId, groups: [] })).length
    if (owned >= this.limits.basesPerPerson) throw new RefusalError(`You have ${owned} knowledge bases, the most one person may keep. Delete one first.`, 409)
    const now = this.now()
    const base = { id: `kb-${crypto.randomUUID()}`, ownerId: userId, ...cleanBase(input), createdAt: now, updatedAt: now }
    await this.store.saveBase(base)
    return { ...base, access: 'owner', documents: 0, bytes: 0, passages: 0 }
  }

  /** Changes a base's name, description and sharing (its owner only). */
  async update(userId: string, baseId: string, input: KnowledgeBaseInput): Promise<KnowledgeBaseView> {
    const base = await this.open(userId, baseId, 'owner')
    const next = { id: base.id, ownerId: base.ownerId, createdAt: base.createdAt, ...cleanBase(input), updatedAt: this.now() }
    await this.store.saveBase(next)
    return { ...base, ...next }
  }

  /** Deletes a base with its documents, their passages and files (its owner only). */
  async remove(userId: string, baseId: string): Promise<void> {
    await this.open(userId, baseId, 'owner')
    await this.store.deleteBase(baseId)
    await this.files.deleteWorkspace(workspaceOf(baseId))
  }

  /** A base's documents, by name. */
  async documents(userId: string, baseId: string): Promise<{ base: KnowledgeBaseView, documents: KnowledgeDocument[] }> {
    const base = await this.open(userId, baseId)
    return { base, documents: await this.store.listDocuments(baseId) }
  }

  /**
   * Why a version of `document` cut into `count` passages may not be kept: its owner would pass the
   * passages their role and groups allow (its earlier version's passages, replaced, not counted).
   * Checked when its indexing has cut it, before it is embedded.
   */
  async passagesRefusal(document: KnowledgeDocument, count: number): Promise<string | undefined> {
    const base = await this.store.getBase(document.baseId)
    if (!base) return undefined
    const [usage, owner] = await Promise.all([this.store.usage(base.ownerId), this.limits.perOwner(base.ownerId)])
    if (usage.passages - document.passages + count <= owner.passages) return undefined
    return `It has ${count.toLocaleString('en')} passages; with them the owner of this base would keep more than the ${owner.passages.toLocaleString('en')} passages their role and groups allow. Delete some documents, then add it again.`
  }

  /**
   * Adds a file to a base, to be indexed in the background. A file of a name the base has is a new
   * version of that document (the same bytes again change nothing and are not indexed again).
   */
  async addDocument(userId: string, baseId: string, file: { name: string, bytes: Uint8Array, type?: string }): Promise<{ document: KnowledgeDocument, changed: boolean }> {
    const base = await this.open(userId, baseId, 'edit')
    const name = cleanDocumentName(file.name)
    const mediaType = knowledgeFileTypeOf(name, file.type)
    if (!mediaType) throw new RefusalError(`${name}: a knowledge base takes PDF, Word (.docx), Markdown, HTML, text and CSV files.`, 415)
    if (file.bytes.byteLength === 0) throw new RefusalError(`${name} is empty.`, 400)
    if (file.bytes.byteLength > this.limits.fileBytes) throw new RefusalError(`${name} has ${megabytes(file.bytes.byteLength)}; a document may have at most ${megabytes(this.limits.fileBytes)}.`, 413)
    const contentHash = createHash('sha256').update(file.bytes).digest('hex')
    const existing = (await this.store.listDocuments(baseId)).find(document => document.name === name)
    if (existing?.contentHash === contentHash && existing.status !== 'failed') return { document: existing, changed: false }
    const [usage, owner] = await Promise.all([this.store.usage(base.ownerId), this.limits.perOwner(base.ownerId)])
    if (!existing && usage.documents >= owner.documents) throw new RefusalError(`The owner of this base keeps ${usage.documents.toLocaleString('en')} documents, the most their role and groups allow. Delete some first.`, 409)
    if (usage.bytes - (existing?.bytes ?? 0) + file.bytes.byteLength > owner.bytes) throw new RefusalError(`This would take the owner of this base past the ${megabytes(owner.bytes)} of documents their role and groups allow. Delete some first.`, 409)
    if (usage.passages - (existing?.passages ?? 0) >= owner.passages) throw new RefusalError(`The owner of this base keeps ${usage.passages.toLocaleString('en')} passages, the most their role and groups allow. Delete some documents first.`, 409)
    const now = this.now()
    const document: KnowledgeDocument = {
      id: existing?.id ?? `kd-${crypto.randomUUID()}`,
      baseId,
      name,
      mediaType,
      bytes: file.bytes.byteLength,
      contentHash,
      status: 'queued',
      // A new version keeps its old passages (searchable) until it is indexed.
      passages: existing?.passages ?? 0,
      ...(existing?.pages ? { pages: existing.pages } : {}),
      addedBy: userId,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    }
    // The file first: a document row never points at a file that is not there.
    await this.files.writeFile({ workspaceId: workspaceOf(baseId), userId: fileOwnerKey(base.ownerId), path: `${document.id}/${contentHash}`, bytes: file.bytes, now })
    await this.store.saveDocument(document)
    if (existing && existing.contentHash !== contentHash) await this.files.deleteFile(workspaceOf(baseId), `${existing.id}/${existing.contentHash}`)
    this.onQueued()
    return { document, changed: true }
  }

  /**
   * Adds a web page (or a PDF, text or CSV file on the web) to a base, through web_fetch's guard and
   * count; named by its address, so adding it again fetches a new version of the same document.
   */
  async addPage(userId: string, baseId: string, url: string): Promise<{ document: KnowledgeDocument, changed: boolean }> {
    await this.open(userId, baseId, 'edit')
    const pages = this.extras.pages
    if (!pages) throw new RefusalError('Adding web pages is off on this server (NUXT_TOOLS_WEB_FETCH).', 404)
    const denial = await pages.denial(userId)
    if (denial) throw new RefusalError(`You may not fetch web pages: ${denial}.`, 403)
    let page: Awaited<ReturnType<KnowledgePages['fetch']>>
    try {
      page = await pages.fetch(url, userId, this.limits.fileBytes)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      throw new RefusalError(message, message.startsWith('You made') ? 429 : 400)
    }
    if (page.status >= 400) throw new RefusalError(`${page.url} answered ${page.status}.`, 400)
    if (page.truncated) throw new RefusalError(`${page.url} is larger than the ${megabytes(this.limits.fileBytes)} a document may have.`, 413)
    const type = knowledgeFileTypeOf('', page.contentType)
    if (!type) throw new RefusalError(`${page.url} is ${page.contentType.split(';')[0] || 'of no type'}; a knowledge base takes web pages, PDF, Word, Markdown, text and CSV.`, 415)
    return this.addDocument(userId, baseId, { name: pageName(page.url, type), bytes: page.body, type })
  }

  /**
   * Adds a file of a conversation's workspace (one the model or the person wrote there; the caller
   * checked the conversation is `userId`'s) to a base: named by its file name, so adding it again
   * after it changed makes a new version of the same document, and the same bytes change nothing.
   */
  async addWorkspaceFile(userId: string, baseId: string, threadId: string, rawPath: string): Promise<{ document: KnowledgeDocument, changed: boolean }> {
    await this.open(userId, baseId, 'edit')
    const path = workspacePath(rawPath)
    const file = await this.files.readFile(threadWorkspaceId(threadId), path)
    if (!file) throw new RefusalError(`This conversation has no file ${path}.`, 404)
    return this.addDocument(userId, baseId, { name: path.split('/').pop()!, bytes: file.bytes })
  }

  /** The file of a document's current version, or null when it is gone. */
  readFile(document: KnowledgeDocument): Promise<Uint8Array | null> {
    return this.files.readFile(workspaceOf(document.baseId), `${document.id}/${document.contentHash}`).then(file => file?.bytes ?? null)
  }

  /** A document of a base `userId` may read (404 otherwise), or edit when `needs` says so (403 for a reader). */
  async document(userId: string, baseId: string, documentId: string, needs: 'read' | 'edit' = 'read'): Promise<{ base: KnowledgeBaseView, document: KnowledgeDocument }> {
    const base = await this.open(userId, baseId, needs)
    const document = await this.store.getDocument(documentId)
    if (!document || document.baseId !== baseId) throw new RefusalError('There is no document by that id in this knowledge base (it may have been deleted).', 404)
    return { base, document }
  }

  /** A document with a run of its passages from `fromSeq` (to read where a citation points). */
  async read(userId: string, baseId: string, documentId: string, fromSeq: number): Promise<KnowledgeDocumentView> {
    const { base, document } = await this.document(userId, baseId, documentId)
    const passages = await this.store.readPassages(documentId, Math.max(0, fromSeq), PASSAGES_PER_READ + 1)
    const more = passages.length > PASSAGES_PER_READ
    return { base, document, passages: passages.slice(0, PASSAGES_PER_READ), ...(more ? { nextSeq: passages[PASSAGES_PER_READ]!.seq } : {}) }
  }

  /** Deletes a document with its passages and file (edit access). */
  async removeDocument(userId: string, baseId: string, documentId: string): Promise<void> {
    const { document } = await this.document(userId, baseId, documentId, 'edit')
    await this.store.deleteDocument(documentId)
    await this.files.deleteFile(workspaceOf(baseId), `${document.id}/${document.contentHash}`)
  }

  /** The passages best matching `query` in those of `baseIds` that `userId` may read. */
  async search(userId: string, baseIds: readonly string[], query: string, limit: number): Promise<{ bases: KnowledgeBaseView[], hits: KnowledgeHit[] }> {
    if (!this.limits.enabled) return { bases: [], hits: [] }
    const bases = (await Promise.all([...new Set(baseIds)].map(id => this.open(userId, id).catch(() => undefined)))).filter(base => base !== undefined)
    return { bases, hits: await this.passages.search(bases.map(base => base.id), query, limit) }
  }

  /**
   * What an answer's instructions say of `baseIds` for `question`: the best passages, each with its
   * source and the link to cite, or undefined when none are put up front (the operator's setting)
   * or none match.
   */
  async promptFor(userId: string, baseIds: readonly string[], question: string): Promise<string | undefined> {
    const count = this.limits.passagesUpFront ?? 0
    if (count === 0 || baseIds.length === 0) return undefined
    const { hits } = await this.search(userId, baseIds, question, count)
    if (hits.length === 0) return undefined
    const passages = hits.map((hit, index) => `[${index + 1}] ${sourceOf(hit)} — cite as [${index + 1}](${passageLink(hit)})\n${hit.text}`)
    return `Passages from the knowledge bases attached to this conversation that may answer the question. Answer from them where they do, citing each passage you use with its link; search_knowledge finds more.\n\n${passages.join('\n\n')}`
  }

  /** Deletes every base `userId` owns, with the files (their account was deleted). */
  async deleteUser(userId: string): Promise<void> {
    for (const base of await this.store.listBases({ ownerId: userId, groups: [] })) {
      if (base.ownerId !== userId) continue
      await this.store.deleteBase(base.id)
      await this.files.deleteWorkspace(workspaceOf(base.id))
    }
    await this.files.deleteUserFiles(fileOwnerKey(userId))
  }
}

function cleanBase(input: KnowledgeBaseInput): { name: string, description?: string, sharedWith: KnowledgeShare[] } {
  const name = input.name.replace(/\s+/g, ' ').trim()
  if (!name) throw new RefusalError('A knowledge base needs a name.', 400)
  if (name.length > KNOWLEDGE_NAME_MAX) throw new RefusalError(`A knowledge base's name is at most ${KNOWLEDGE_NAME_MAX} characters.`, 400)
  const description = input.description?.trim()
  if (description && description.length > KNOWLEDGE_DESCRIPTION_MAX) throw new RefusalError(`A description is at most ${KNOWLEDGE_DESCRIPTION_MAX} characters.`, 400)
  const sharedWith = new Map<string, KnowledgeShare>()
  for (const share of input.sharedWith ?? []) sharedWith.set(share.group.trim().toLowerCase(), { group: share.group.trim(), access: share.access })
  return { name, ...(description ? { description } : {}), sharedWith: [...sharedWith.values()] }
}

/** A file's name without its folders and control characters, at most 200 characters (its extension kept). */
function cleanDocumentName(raw: string): string {
  const base = raw.split(/[/\\]/).pop()!.replace(/[\p{Cc}\p{Cf}]/gu, '').trim()
  if (!base) throw new RefusalError('A document needs a file name.', 400)
  if (base.length <= DOCUMENT_NAME_MAX) return base
  const dot = base.lastIndexOf('.')
  const extension = dot > 0 && base.length - dot <= 10 ? base.slice(dot) : ''
  return base.slice(0, DOCUMENT_NAME_MAX - extension.length) + extension
}

/** A document name for the page at `url`: its host and path, ending as its type's files do ("example.org-handbook.html"). */
function pageName(url: string, type: KnowledgeFileType): string {
  const address = new URL(url)
  const stem = `${address.hostname}${address.pathname}`.replace(/\/+$/, '').replace(/[^\w.-]+/g, '-').slice(0, 150) || 'page'
  const extensions: readonly string[] = KNOWLEDGE_FILE_TYPES[type]
  return extensions.some(extension => stem.toLowerCase().endsWith(extension)) ? stem : `${stem}${extensions[0]}`
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`
