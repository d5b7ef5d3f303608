/**
 * Knowledge bases for the Convex knowledge store (server/lib/stores/knowledge/convex.ts); the
 * tables and how a document's passages are versioned: convex/lib/knowledgeTables.ts. A base,
 * document or owner deleted is gone at once for every read (a document counts only while its base
 * is there, a passage only while it is of its document's live version); their rows go in scheduled
 * passes under the transaction limits. Server secret required.
 */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import { internalMutation, internalQuery, type MutationCtx, type QueryCtx } from './_generated/server'
import { internal } from './_generated/api'
import { serverAction, serverMutation, serverQuery } from './lib/serverGuard'
import type { KnowledgeHit } from '../shared/types/knowledge'
import { knowledgeShare, knowledgeVectorTable, vectorTableFor, type KnowledgeVectorTable } from './lib/knowledgeTables'

/** Rows one scheduled pass deletes (passages of ~1 kB, vectors of up to 16 kB: far under a transaction's limits). */
const ROWS_PER_PASS = 200
/** Documents one listing (a base's, an owner's usage) reads at most; the server's per-person limits are lower. */
const DOCUMENTS_SCAN = 5_000
/** Candidates a search reads per base before dropping those not of a live version. */
const SEARCH_READ_FACTOR = 3

type Reader = Pick<QueryCtx, 'db'>

const documentStatus = v.union(v.literal('queued'), v.literal('indexing'), v.literal('ready'), v.literal('failed'))

const baseArgs = { id: v.string(), ownerId: v.string(), name: v.string(), description: v.optional(v.string()), sharedWith: v.array(knowledgeShare), createdAt: v.number(), updatedAt: v.number() }
const documentArgs = {
  id: v.string(), baseId: v.string(), name: v.string(), mediaType: v.string(), bytes: v.number(), contentHash: v.string(), status: documentStatus,
  error: v.optional(v.string()), passages: v.number(), pages: v.optional(v.number()), addedBy: v.string(), createdAt: v.number(), updatedAt: v.number(),
}

const findBase = (ctx: Reader, key: string) => ctx.db.query('knowledge_bases').withIndex('by_key', q => q.eq('key', key)).unique()
const findDocumentRow = (ctx: Reader, key: string) => ctx.db.query('knowledge_documents').withIndex('by_key', q => q.eq('key', key)).unique()

/** A document, while its base is there. */
async function findDocument(ctx: Reader, key: string): Promise<Doc<'knowledge_documents'> | null> {
  const row = await findDocumentRow(ctx, key)
  return row && await findBase(ctx, row.base_key) ? row : null
}

const documentOf = (row: Doc<'knowledge_documents'>) => ({
  id: row.key,
  baseId: row.base_key,
  name: row.name,
  mediaType: row.media_type,
  bytes: row.bytes,
  contentHash: row.content_hash,
  status: row.status,
  ...(row.error ? { error: row.error } : {}),
  passages: row.passages,
  ...(row.pages ? { pages: row.pages } : {}),
  addedBy: row.added_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

const passageOf = (row: Doc<'knowledge_passages'>) => ({
  id: `${row.document_key}:${row.seq}`,
  documentId: row.document_key,
  baseId: row.base_key,
  seq: row.seq,
  text: row.text,
  ...(row.heading ? { heading: row.heading } : {}),
  ...(row.page ? { page: row.page } : {}),
})

function withTotals(base: Doc<'knowledge_bases'>) {
  return {
    id: base.key,
    ownerId: base.owner_id,
    name: base.name,
    ...(base.description ? { description: base.description } : {}),
    sharedWith: base.shared_with,
    createdAt: base.created_at,
    updatedAt: base.updated_at,
    documents: base.documents,
    bytes: base.bytes,
    passages: base.passages,
  }
}

/** Adds to a base's totals (a base already deleted has none to keep). */
async function count(ctx: MutationCtx, baseKey: string, change: { documents?: number, bytes?: number, passages?: number }): Promise<void> {
  const base = await findBase(ctx, baseKey)
  if (!base) return
  await ctx.db.patch(base._id, { documents: base.documents + (change.documents ?? 0), bytes: base.bytes + (change.bytes ?? 0), passages: base.passages + (change.passages ?? 0) })
}

/** The document's row when `holder` holds its indexing of `contentHash`, else null. */
async function heldDocument(ctx: Reader, key: string, contentHash: string, holder: string) {
  const row = await findDocument(ctx, key)
  return row && row.content_hash === contentHash && row.status === 'indexing' && row.lease_holder === holder ? row : null
}

async function deleteBaseRows(ctx: MutationCtx, base: Doc<'knowledge_bases'>): Promise<void> {
  await ctx.db.delete(base._id)
  for (const row of await ctx.db.query('knowledge_base_groups').withIndex('by_base', q => q.eq('base_key', base.key)).collect()) await ctx.db.delete(row._id)
  await ctx.scheduler.runAfter(0, internal.knowledge.dropBaseDocuments, { baseKey: base.key })
}

export const saveBase = serverMutation({
  args: { base: v.object(baseArgs) },
  handler: async (ctx, { base }) => {
    const fields = { owner_id: base.ownerId, name: base.name, description: base.description, shared_with: base.sharedWith, created_at: base.createdAt, updated_at: base.updatedAt }
    const existing = await findBase(ctx, base.id)
    if (existing) await ctx.db.patch(existing._id, { ...fields, owner_id: existing.owner_id, created_at: existing.created_at })
    else await ctx.db.insert('knowledge_bases', { key: base.id, ...fields, documents: 0, bytes: 0, passages: 0 })
    for (const row of await ctx.db.query('knowledge_base_groups').withIndex('by_base', q => q.eq('base_key', base.id)).collect()) await ctx.db.delete(row._id)
    for (const group of new Set(base.sharedWith.map(share => share.group.toLowerCase()))) await ctx.db.insert('knowledge_base_groups', { group_key: group, base_key: base.id })
  },
})

export const getBase = serverQuery({
  args: { id: v.string() },
  handler: async (ctx, { id }) => {
    const base = await findBase(ctx, id)
    return base ? withTotals(base) : null
  },
})

export const listBases = serverQuery({
  args: { ownerId: v.string(), groups: v.array(v.string()) },
  handler: async (ctx, { ownerId, groups }) => {
    const found = new Map<string, Doc<'knowledge_bases'>>()
    for (const base of await ctx.db.query('knowledge_bases').withIndex('by_owner', q => q.eq('owner_id', ownerId)).collect()) found.set(base.key, base)
    for (const group of new Set(groups.map(name => name.toLowerCase()))) {
      for (const row of await ctx.db.query('knowledge_base_groups').withIndex('by_group', q => q.eq('group_key', group)).collect()) {
        if (found.has(row.base_key)) continue
        const base = await findBase(ctx, row.base_key)
        if (base) found.set(base.key, base)
      }
    }
    return [...found.values()].map(withTotals).sort((a, b) => a.name.localeCompare(b.name))
  },
})

export const deleteBase = serverMutation({
  args: { id: v.string() },
  handler: async (ctx, { id }) => {
    const base = await findBase(ctx, id)
    if (base) await deleteBaseRows(ctx, base)
  },
})

/** Creates or replaces a document's row; its live passages stay until a new version's indexing ends. */
export const saveDocument = serverMutation({
  args: { document: v.object(documentArgs) },
  handler: async (ctx, { document }) => {
    const base = await findBase(ctx, document.baseId)
    if (!base) throw new Error(`No knowledge base ${document.baseId}.`)
    const fields = {
      base_key: document.baseId, owner_id: base.owner_id, name: document.name, media_type: document.mediaType, bytes: document.bytes, content_hash: document.contentHash,
      status: document.status, error: document.error, passages: document.passages, pages: document.pages, added_by: document.addedBy, updated_at: document.updatedAt,
      lease_holder: undefined, lease_until: undefined,
    }
    const existing = await findDocumentRow(ctx, document.id)
    if (existing) await ctx.db.patch(existing._id, fields)
    else await ctx.db.insert('knowledge_documents', { key: document.id, ...fields, created_at: document.createdAt })
    await count(ctx, document.baseId, { documents: existing ? 0 : 1, bytes: document.bytes - (existing?.bytes ?? 0), passages: document.passages - (existing?.passages ?? 0) })
  },
})

export const getDocument = serverQuery({
  args: { id: v.string() },
  handler: async (ctx, { id }) => {
    const row = await findDocument(ctx, id)
    return row ? documentOf(row) : null
  },
})

export const listDocuments = serverQuery({
  args: { baseId: v.string() },
  handler: async (ctx, { baseId }) => {
    if (!await findBase(ctx, baseId)) return []
    const rows = await ctx.db.query('knowledge_documents').withIndex('by_base_and_name', q => q.eq('base_key', baseId)).take(DOCUMENTS_SCAN)
    return rows.map(documentOf)
  },
})

export const deleteDocument = serverMutation({
  args: { id: v.string() },
  handler: async (ctx, { id }) => {
    const row = await findDocumentRow(ctx, id)
    if (!row) return
    await ctx.db.delete(row._id)
    await count(ctx, row.base_key, { documents: -1, bytes: -row.bytes, passages: -row.passages })
    await ctx.scheduler.runAfter(0, internal.knowledge.dropVersions, { documentKey: id })
  },
})

export const claimIndexing = serverMutation({
  args: { id: v.string(), contentHash: v.string(), holder: v.string(), until: v.number(), now: v.number() },
  handler: async (ctx, { id, contentHash, holder, until, now }) => {
    const row = await findDocument(ctx, id)
    if (!row || row.content_hash !== contentHash) return false
    const free = row.status === 'queued' || (row.status === 'indexing' && (row.lease_until === undefined || row.lease_until <= now || row.lease_holder === holder))
    if (!free) return false
    await ctx.db.patch(row._id, { status: 'indexing', lease_holder: holder, lease_until: until })
    return true
  },
})

const claimArgs = { id: v.string(), contentHash: v.string(), holder: v.string(), version: v.string() }

async function stagedVersion(ctx: MutationCtx, documentKey: string, version: string, vectorTable?: KnowledgeVectorTable): Promise<void> {
  const existing = await ctx.db.query('knowledge_versions').withIndex('by_document', q => q.eq('document_key', documentKey).eq('version', version)).unique()
  if (!existing) await ctx.db.insert('knowledge_versions', { document_key: documentKey, version, vector_table: vectorTable })
  else if (vectorTable && !existing.vector_table) await ctx.db.patch(existing._id, { vector_table: vectorTable })
}

/** Writes a batch of a version's passages, while `holder` still holds the indexing; false (nothing written) once it does not. */
export const stagePassages = serverMutation({
  args: { ...claimArgs, passages: v.array(v.object({ seq: v.number(), text: v.string(), heading: v.optional(v.string()), page: v.optional(v.number()), stems: v.string() })) },
  handler: async (ctx, { id, contentHash, holder, version, passages }) => {
    const row = await heldDocument(ctx, id, contentHash, holder)
    if (!row) return false
    await stagedVersion(ctx, id, version)
    for (const passage of passages) await ctx.db.insert('knowledge_passages', { document_key: id, version, base_key: row.base_key, ...passage })
    return true
  },
})

/** Writes a batch of a version's vectors (each already the table's length), likewise. */
export const stageVectors = serverMutation({
  args: { ...claimArgs, table: knowledgeVectorTable, model: v.string(), vectors: v.array(v.object({ seq: v.number(), vector: v.array(v.float64()) })) },
  handler: async (ctx, { id, contentHash, holder, version, table, model, vectors }) => {
    const row = await heldDocument(ctx, id, contentHash, holder)
    if (!row) return false
    await stagedVersion(ctx, id, version, table)
    const scope = `${row.base_key}\n${model}`
    for (const { seq, vector } of vectors) await ctx.db.insert(table, { document_key: id, version, seq, scope, vector })
    return true
  },
})

/** Ends the indexing `holder` holds: the staged version becomes the document's (or, failed, none), in one step. */
export const finishIndexing = serverMutation({
  args: { ...claimArgs, status: v.union(v.literal('ready'), v.literal('failed')), error: v.optional(v.string()), passages: v.number(), pages: v.optional(v.number()), now: v.number() },
  handler: async (ctx, { id, contentHash, holder, version, status, error, passages, pages, now }) => {
    const row = await heldDocument(ctx, id, contentHash, holder)
    if (!row) return false
    await count(ctx, row.base_key, { passages: (status === 'ready' ? passages : 0) - row.passages })
    await ctx.db.patch(row._id, {
      status, error: status === 'failed' ? error : undefined, passages: status === 'ready' ? passages : 0, pages: status === 'ready' ? pages : undefined,
      live_version: status === 'ready' ? version : undefined, updated_at: now, lease_holder: undefined, lease_until: undefined,
    })
    if (status === 'ready') await stagedVersion(ctx, id, version)
    await ctx.scheduler.runAfter(0, internal.knowledge.dropVersions, { documentKey: id })
    return true
  },
})

export const listUnindexed = serverQuery({
  args: { limit: v.number() },
  handler: async (ctx, { limit }) => {
    const rows: Doc<'knowledge_documents'>[] = []
    for (const status of ['queued', 'indexing'] as const) {
      rows.push(...await ctx.db.query('knowledge_documents').withIndex('by_status_and_updated', q => q.eq('status', status)).take(limit))
    }
    const kept = []
    for (const row of rows.sort((a, b) => a.updated_at - b.updated_at)) {
      if (kept.length >= limit) break
      if (await findBase(ctx, row.base_key)) kept.push(documentOf(row))
    }
    return kept
  },
})

/** A passage with its document's name, when it is of its document's live version. */
async function liveHit(ctx: Reader, passage: Doc<'knowledge_passages'> | null, documents: Map<string, Doc<'knowledge_documents'> | null>) {
  if (!passage) return null
  if (!documents.has(passage.document_key)) documents.set(passage.document_key, await findDocument(ctx, passage.document_key))
  const document = documents.get(passage.document_key)
  return document?.live_version === passage.version ? { ...passageOf(passage), documentName: document.name } : null
}

/**
 * The passages of `baseIds` whose stems best match `stems` (Convex's BM25, best first), each base
 * searched on its own and the lists interleaved by rank; `score` falls with the rank.
 */
export const search = serverQuery({
  args: { baseIds: v.array(v.string()), stems: v.string(), limit: v.number() },
  handler: async (ctx, { baseIds, stems, limit }) => {
    const documents = new Map<string, Doc<'knowledge_documents'> | null>()
    const lists = []
    for (const baseKey of new Set(baseIds)) {
      const candidates = await ctx.db.query('knowledge_passages').withSearchIndex('by_stems', q => q.search('stems', stems).eq('base_key', baseKey)).take(limit * SEARCH_READ_FACTOR)
      const hits = []
      for (const candidate of candidates) {
        const hit = await liveHit(ctx, candidate, documents)
        if (hit) hits.push(hit)
        if (hits.length >= limit) break
      }
      lists.push(hits)
    }
    return lists.flatMap(hits => hits.map((hit, rank) => ({ ...hit, score: 1 / (rank + 1) }))).sort((a, b) => b.score - a.score).slice(0, limit)
  },
})

/** The passages of vector rows a vector search found, in its order, when live. */
export const vectorHits = internalQuery({
  args: { table: knowledgeVectorTable, found: v.array(v.object({ id: v.string(), score: v.number() })), limit: v.number() },
  handler: async (ctx, { table, found, limit }) => {
    const documents = new Map<string, Doc<'knowledge_documents'> | null>()
    const hits = []
    for (const { id, score } of found) {
      const vectorRow = await ctx.db.get(ctx.db.normalizeId(table, id)!)
      if (!vectorRow) continue
      const passage = await ctx.db.query('knowledge_passages').withIndex('by_document_version_seq', q => q.eq('document_key', vectorRow.document_key).eq('version', vectorRow.version).eq('seq', vectorRow.seq)).unique()
      const hit = await liveHit(ctx, passage, documents)
      if (hit) hits.push({ ...hit, score })
      if (hits.length >= limit) break
    }
    return hits
  },
})

/** The passages of `baseIds` nearest `vector` among those embedded by `model` (cosine, best first). */
export const searchVectors = serverAction({
  args: { baseIds: v.array(v.string()), model: v.string(), vector: v.array(v.float64()), limit: v.number() },
  handler: async (ctx, { baseIds, model, vector, limit }): Promise<KnowledgeHit[]> => {
    const target = vectorTableFor(vector.length)
    const bases = [...new Set(baseIds)]
    if (!target || bases.length === 0) return []
    const padded = vector.length === target.size ? vector : [...vector, ...Array.from({ length: target.size - vector.length }, () => 0)]
    const found = await ctx.vectorSearch(target.table, 'by_vector', {
      vector: padded,
      limit: Math.min(256, limit * SEARCH_READ_FACTOR),
      filter: q => q.or(...bases.map(baseKey => q.eq('scope', `${baseKey}\n${model}`))),
    })
    return ctx.runQuery(internal.knowledge.vectorHits, { table: target.table, found: found.map(hit => ({ id: hit._id, score: hit._score })), limit })
  },
})

export const readPassages = serverQuery({
  args: { documentId: v.string(), fromSeq: v.number(), limit: v.number() },
  handler: async (ctx, { documentId, fromSeq, limit }) => {
    const document = await findDocument(ctx, documentId)
    const version = document?.live_version
    if (version === undefined) return []
    const rows = await ctx.db.query('knowledge_passages').withIndex('by_document_version_seq', q => q.eq('document_key', documentId).eq('version', version).gte('seq', fromSeq)).take(limit)
    return rows.map(passageOf)
  },
})

export const usage = serverQuery({
  args: { ownerId: v.string() },
  handler: async (ctx, { ownerId }) => {
    const owned = new Set((await ctx.db.query('knowledge_bases').withIndex('by_owner', q => q.eq('owner_id', ownerId)).collect()).map(base => base.key))
    const rows = (await ctx.db.query('knowledge_documents').withIndex('by_owner', q => q.eq('owner_id', ownerId)).take(DOCUMENTS_SCAN)).filter(row => owned.has(row.base_key))
    return { documents: rows.length, bytes: rows.reduce((sum, row) => sum + row.bytes, 0), passages: rows.reduce((sum, row) => sum + row.passages, 0) }
  },
})

export const deleteOwner = serverMutation({
  args: { ownerId: v.string() },
  handler: async (ctx, { ownerId }) => {
    for (const base of await ctx.db.query('knowledge_bases').withIndex('by_owner', q => q.eq('owner_id', ownerId)).collect()) await deleteBaseRows(ctx, base)
  },
})

/** Deletes a pass of a deleted base's documents, each with its versions after it; again until none is left. */
export const dropBaseDocuments = internalMutation({
  args: { baseKey: v.string() },
  handler: async (ctx, { baseKey }) => {
    if (await findBase(ctx, baseKey)) return
    const rows = await ctx.db.query('knowledge_documents').withIndex('by_base_and_name', q => q.eq('base_key', baseKey)).take(ROWS_PER_PASS)
    for (const row of rows) {
      await ctx.db.delete(row._id)
      await ctx.scheduler.runAfter(0, internal.knowledge.dropVersions, { documentKey: row.key })
    }
    if (rows.length === ROWS_PER_PASS) await ctx.scheduler.runAfter(0, internal.knowledge.dropBaseDocuments, { baseKey })
  },
})

/**
 * Deletes a pass of the passages and vectors of a document's versions other than its live one
 * (all of them once the document is gone), and a version's row once it has none; again until done.
 * Nothing while the document is being indexed: that indexing's end schedules this again.
 */
export const dropVersions = internalMutation({
  args: { documentKey: v.string() },
  handler: async (ctx, { documentKey }) => {
    const document = await findDocumentRow(ctx, documentKey)
    // Its staged versions cannot be told from the one being written now: the end of that indexing drops them.
    if (document?.status === 'indexing') return
    const versions = (await ctx.db.query('knowledge_versions').withIndex('by_document', q => q.eq('document_key', documentKey)).collect()).filter(row => row.version !== document?.live_version)
    let budget = ROWS_PER_PASS
    for (const staged of versions) {
      const passages = await ctx.db.query('knowledge_passages').withIndex('by_document_version_seq', q => q.eq('document_key', documentKey).eq('version', staged.version)).take(budget)
      for (const row of passages) await ctx.db.delete(row._id)
      budget -= passages.length
      if (staged.vector_table && budget > 0) {
        const vectors = await ctx.db.query(staged.vector_table).withIndex('by_document_version', q => q.eq('document_key', documentKey).eq('version', staged.version)).take(budget)
        for (const row of vectors) await ctx.db.delete(row._id)
        budget -= vectors.length
      }
      if (budget > 0) await ctx.db.delete(staged._id)
      else break
    }
    if (budget <= 0) await ctx.scheduler.runAfter(0, internal.knowledge.dropVersions, { documentKey })
  },
})
