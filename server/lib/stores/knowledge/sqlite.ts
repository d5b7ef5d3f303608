/**
 * Knowledge bases in the app's sqlite file: passages searched by BM25 through FTS5 (the migration's
 * `knowledge_passages_fts`, Porter stems, accents folded). A search reads the best matches of the
 * bases asked for only; deleting a large base goes a batch at a time, so it never holds the
 * write lock long. Passages' embeddings are kept beside them whole and as their sign bits (see
 * the migration, sqlite-schema.ts); a nearest-passages search runs in SQLite itself through
 * sqlite-vec (loaded on first use): the bits of the bases asked for by Hamming distance, then the
 * candidates' whole vectors by cosine, without copying a vector into JavaScript.
 */
import type { KnowledgeBase, KnowledgeDocument, KnowledgeDocumentStatus, KnowledgeFileType, KnowledgeHit, KnowledgePassage, KnowledgeShare } from '../../../../shared/types/knowledge'
import * as sqliteVec from 'sqlite-vec'
import { openSqliteDatabase } from '../sqlite/database'
import type { KnowledgeStore, StoredKnowledgeBase } from './knowledge-store'
import { knowledgeFtsQuery, knowledgeSearchWords, stemOf } from './search-words'

interface BaseRow { id: string, owner_id: string, name: string, description: string | null, shared_with: string, created_at: number, updated_at: number, documents: number, bytes: number | null, passages: number | null }
interface DocumentRow { id: string, base_id: string, owner_id: string, name: string, media_type: string, bytes: number, content_hash: string, status: string, error: string | null, passages: number, pages: number | null, added_by: string, created_at: number, updated_at: number }
interface PassageRow { document_id: string, seq: number, base_id: string, heading: string | null, page: number | null, text: string }

/** Rows one delete takes at a time. */
const DELETE_BATCH = 500
/**
 * A word held by more passages than this (and more than a tenth of all) is left out of a search
 * with other words: ranking every passage that has it would hold the event loop for hundreds of
 * milliseconds over 100,000 passages, for a word that tells them apart by almost nothing (BM25
 * weighs it near zero).
 */
const COMMON_WORD_PASSAGES = 2_000

/** A vector as sqlite-vec reads it: its float32 bytes. */
const blobOf = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)

/** A vector's signs, one bit per number (set when positive), as sqlite-vec's bit vectors are laid out. */
function signBits(vector: Float32Array): Buffer {
  const bits = Buffer.alloc(Math.ceil(vector.length / 8))
  for (let index = 0; index < vector.length; index++) if (vector[index]! > 0) bits[index >> 3]! |= 1 << (index & 7)
  return bits
}

/**
 * Passages a search by meaning ranks by their whole vectors, taken by the Hamming distance of
 * their signs: the signs keep most of what orders neighbours, and ranking a hundred or so again by
 * the cosine restores the order among them.
 */
const NEAREST_CANDIDATES = 100

const BASE_COLUMNS = `b.*, (SELECT COUNT(*) FROM knowledge_documents d WHERE d.base_id = b.id) AS documents,
  (SELECT SUM(bytes) FROM knowledge_documents d WHERE d.base_id = b.id) AS bytes, (SELECT SUM(passages) FROM knowledge_documents d WHERE d.base_id = b.id) AS passages`

const baseOf = (row: BaseRow): StoredKnowledgeBase => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  ...(row.description ? { description: row.description } : {}),
  sharedWith: JSON.parse(row.shared_with) as KnowledgeShare[],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  documents: row.documents,
  bytes: row.bytes ?? 0,
  passages: row.passages ?? 0,
})

const documentOf = (row: DocumentRow): KnowledgeDocument => ({
  id: row.id,
  baseId: row.base_id,
  name: row.name,
  mediaType: row.media_type as KnowledgeFileType,
  bytes: row.bytes,
  contentHash: row.content_hash,
  status: row.status as KnowledgeDocumentStatus,
  ...(row.error ? { error: row.error } : {}),
  passages: row.passages,
  ...(row.pages ? { pages: row.pages } : {}),
  addedBy: row.added_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

const passageOf = (row: PassageRow): KnowledgePassage => ({
  id: `${row.document_id}:${row.seq}`,
  documentId: row.document_id,
  baseId: row.base_id,
  seq: row.seq,
  text: row.text,
  ...(row.heading ? { heading: row.heading } : {}),
  ...(row.page ? { page: row.page } : {}),
})

export function createSqliteKnowledgeStore(options: { path: string }): KnowledgeStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    saveBase: db.prepare(`INSERT INTO knowledge_bases (id, owner_id, name, description, shared_with, created_at, updated_at) VALUES (@id, @ownerId, @name, @description, @sharedWith, @createdAt, @updatedAt)
      ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description, shared_with = excluded.shared_with, updated_at = excluded.updated_at`),
    clearGroups: db.prepare('DELETE FROM knowledge_base_groups WHERE base_id = ?'),
    addGroup: db.prepare('INSERT OR IGNORE INTO knowledge_base_groups (group_key, base_id) VALUES (?, ?)'),
    getBase: db.prepare<[string], BaseRow>(`SELECT ${BASE_COLUMNS} FROM knowledge_bases b WHERE b.id = ?`),
    listOwned: db.prepare<[string], BaseRow>(`SELECT ${BASE_COLUMNS} FROM knowledge_bases b WHERE b.owner_id = ?`),
    listShared: db.prepare<[string], BaseRow>(`SELECT ${BASE_COLUMNS} FROM knowledge_base_groups g JOIN knowledge_bases b ON b.id = g.base_id WHERE g.group_key = ?`),
    deleteBaseRow: db.prepare('DELETE FROM knowledge_bases WHERE id = ?'),
    documentsOfBase: db.prepare<[string], { id: string }>('SELECT id FROM knowledge_documents WHERE base_id = ?'),
    basesOfOwner: db.prepare<[string], { id: string }>('SELECT id FROM knowledge_bases WHERE owner_id = ?'),
    saveDocument: db.prepare(`INSERT INTO knowledge_documents (id, base_id, owner_id, name, media_type, bytes, content_hash, status, error, passages, pages, added_by, created_at, updated_at)
      VALUES (@id, @baseId, (SELECT owner_id FROM knowledge_bases WHERE id = @baseId), @name, @mediaType, @bytes, @contentHash, @status, @error, @passages, @pages, @addedBy, @createdAt, @updatedAt)
      ON CONFLICT (id) DO UPDATE SET name = excluded.name, media_type = excluded.media_type, bytes = excluded.bytes, content_hash = excluded.content_hash, status = excluded.status,
        error = excluded.error, passages = excluded.passages, pages = excluded.pages, added_by = excluded.added_by, updated_at = excluded.updated_at, lease_holder = NULL, lease_until = NULL`),
    getDocument: db.prepare<[string], DocumentRow>('SELECT * FROM knowledge_documents WHERE id = ?'),
    listDocuments: db.prepare<[string], DocumentRow>('SELECT * FROM knowledge_documents WHERE base_id = ? ORDER BY name'),
    deleteDocumentRow: db.prepare('DELETE FROM knowledge_documents WHERE id = ?'),
    deletePassages: db.prepare('DELETE FROM knowledge_passages WHERE rowid IN (SELECT rowid FROM knowledge_passages WHERE document_id = ? LIMIT ?)'),
    claim: db.prepare(`UPDATE knowledge_documents SET status = 'indexing', lease_holder = @holder, lease_until = @until
      WHERE id = @id AND content_hash = @contentHash AND (status = 'queued' OR (status = 'indexing' AND (lease_until IS NULL OR lease_until <= @now OR lease_holder = @holder)))`),
    held: db.prepare<{ id: string, contentHash: string, holder: string }, { base_id: string }>(`SELECT base_id FROM knowledge_documents WHERE id = @id AND content_hash = @contentHash AND status = 'indexing' AND lease_holder = @holder`),
    finish: db.prepare(`UPDATE knowledge_documents SET status = @status, error = @error, passages = @passages, pages = @pages, updated_at = @now, lease_holder = NULL, lease_until = NULL WHERE id = @id`),
    insertPassage: db.prepare('INSERT INTO knowledge_passages (document_id, seq, base_id, heading, page, text) VALUES (?, ?, ?, ?, ?, ?)'),
    unindexed: db.prepare<[number], DocumentRow>(`SELECT * FROM knowledge_documents WHERE status IN ('queued', 'indexing') ORDER BY updated_at LIMIT ?`),
    search: db.prepare<{ query: string, bases: string, limit: number }, PassageRow & { score: number, document_name: string }>(`SELECT p.*, d.name AS document_name, -f.rank AS score
      FROM knowledge_passages_fts f JOIN knowledge_passages p ON p.rowid = f.rowid JOIN knowledge_documents d ON d.id = p.document_id
      WHERE knowledge_passages_fts MATCH @query AND p.base_id IN (SELECT value FROM json_each(@bases)) ORDER BY f.rank LIMIT @limit`),
    wordPassages: db.prepare<[string], { doc: number }>('SELECT doc FROM knowledge_passages_vocab WHERE term = ?'),
    insertVector: db.prepare('INSERT OR REPLACE INTO knowledge_vectors (passage_rowid, vector) VALUES (?, ?)'),
    insertVectorBits: db.prepare('INSERT OR REPLACE INTO knowledge_vector_bits (passage_rowid, base_id, model, bits) VALUES (?, ?, ?, ?)'),
    passageCount: db.prepare<[], { count: number | null }>('SELECT max(rowid) AS count FROM knowledge_passages'),
    deleteAllPassages: db.prepare('DELETE FROM knowledge_passages WHERE document_id = ?'),
    readPassages: db.prepare<[string, number, number], PassageRow>('SELECT * FROM knowledge_passages WHERE document_id = ? AND seq >= ? ORDER BY seq LIMIT ?'),
    usage: db.prepare<[string], { documents: number, bytes: number | null, passages: number | null }>('SELECT COUNT(*) AS documents, SUM(bytes) AS bytes, SUM(passages) AS passages FROM knowledge_documents WHERE owner_id = ?'),
  }

  const saveBase = db.transaction((base: KnowledgeBase) => {
    statements.saveBase.run({ id: base.id, ownerId: base.ownerId, name: base.name, description: base.description ?? null, sharedWith: JSON.stringify(base.sharedWith), createdAt: base.createdAt, updatedAt: base.updatedAt })
    statements.clearGroups.run(base.id)
    for (const share of base.sharedWith) statements.addGroup.run(share.group.toLowerCase(), base.id)
  })
  const deletePassagesOf = async (documentId: string) => {
    while (statements.deletePassages.run(documentId, DELETE_BATCH).changes === DELETE_BATCH) await new Promise(resolve => setImmediate(resolve))
  }
  const deleteDocument = async (id: string) => {
    await deletePassagesOf(id)
    statements.deleteDocumentRow.run(id)
  }
  const deleteBase = async (id: string) => {
    for (const { id: documentId } of statements.documentsOfBase.all(id)) await deleteDocument(documentId)
    db.transaction(() => {
      statements.clearGroups.run(id)
      statements.deleteBaseRow.run(id)
    })()
  }
  const finish = db.transaction((id: string, contentHash: string, holder: string, result: Parameters<KnowledgeStore['finishIndexing']>[3], now: number): boolean => {
    const held = statements.held.get({ id, contentHash, holder })
    if (!held) return false
    statements.deleteAllPassages.run(id)
    if (result.status === 'failed') {
      statements.finish.run({ id, status: 'failed', error: result.error, passages: 0, pages: null, now })
      return true
    }
    const vectors = result.vectors?.values.length === result.passages.length ? result.vectors : undefined
    for (const [seq, passage] of result.passages.entries()) {
      const { lastInsertRowid } = statements.insertPassage.run(id, seq, held.base_id, passage.heading ?? null, passage.page ?? null, passage.text)
      if (vectors) {
        statements.insertVector.run(lastInsertRowid, blobOf(vectors.values[seq]!))
        statements.insertVectorBits.run(lastInsertRowid, held.base_id, vectors.model, signBits(vectors.values[seq]!))
      }
    }
    statements.finish.run({ id, status: 'ready', error: null, passages: result.passages.length, pages: result.pages ?? null, now })
    return true
  })

  // sqlite-vec, loaded once, when a vector search first needs it (a file without embeddings never does).
  let nearest: ReturnType<typeof prepareNearest> | undefined
  function prepareNearest() {
    sqliteVec.load(db)
    return db.prepare<{ vector: Buffer, bytes: number, bits: Buffer, bitBytes: number, model: string, bases: string, candidates: number, limit: number }, PassageRow & { distance: number, document_name: string }>(`SELECT p.*, d.name AS document_name, vec_distance_cosine(v.vector, @vector) AS distance
      FROM (SELECT passage_rowid FROM knowledge_vector_bits
        WHERE base_id IN (SELECT value FROM json_each(@bases)) AND model = @model AND length(bits) = @bitBytes
        ORDER BY vec_distance_hamming(vec_bit(bits), vec_bit(@bits)) LIMIT @candidates) c
      JOIN knowledge_vectors v ON v.passage_rowid = c.passage_rowid
      JOIN knowledge_passages p ON p.rowid = c.passage_rowid JOIN knowledge_documents d ON d.id = p.document_id
      WHERE length(v.vector) = @bytes ORDER BY distance LIMIT @limit`)
  }

  /** `words` without those nearly every passage holds (the rarest one kept when all are). */
  const telling = (words: string[]): string[] => {
    if (words.length < 2) return words
    const common = Math.max(COMMON_WORD_PASSAGES, (statements.passageCount.get()?.count ?? 0) / 10)
    const held = words.map(word => ({ word, passages: statements.wordPassages.get(stemOf(word))?.doc ?? 0 }))
    const rare = held.filter(entry => entry.passages <= common)
    return rare.length > 0 ? rare.map(entry => entry.word) : [held.sort((a, b) => a.passages - b.passages)[0]!.word]
  }

  return {
    async saveBase(base) {
      saveBase(base)
    },
    async getBase(id) {
      const row = statements.getBase.get(id)
      return row ? baseOf(row) : null
    },
    async listBases({ ownerId, groups }) {
      const found = new Map<string, StoredKnowledgeBase>()
      for (const row of statements.listOwned.all(ownerId)) found.set(row.id, baseOf(row))
      for (const group of new Set(groups.map(name => name.toLowerCase()))) {
        for (const row of statements.listShared.all(group)) found.set(row.id, baseOf(row))
      }
      return [...found.values()].sort((a, b) => a.name.localeCompare(b.name))
    },
    deleteBase,
    async saveDocument(document) {
      statements.saveDocument.run({ ...document, error: document.error ?? null, pages: document.pages ?? null })
    },
    async getDocument(id) {
      const row = statements.getDocument.get(id)
      return row ? documentOf(row) : null
    },
    async listDocuments(baseId) {
      return statements.listDocuments.all(baseId).map(documentOf)
    },
    deleteDocument,
    async claimIndexing(id, contentHash, holder, until, now) {
      return statements.claim.run({ id, contentHash, holder, until, now }).changes > 0
    },
    async finishIndexing(id, contentHash, holder, result, now) {
      return finish(id, contentHash, holder, result, now)
    },
    async listUnindexed(limit) {
      return statements.unindexed.all(limit).map(documentOf)
    },
    async search(baseIds, query, limit) {
      const words = telling(knowledgeSearchWords(query))
      if (words.length === 0 || baseIds.length === 0) return []
      // The bases are one parameter (json_each), so the statement is prepared once whatever their number.
      const rows = statements.search.all({ query: knowledgeFtsQuery(words), bases: JSON.stringify(baseIds), limit })
      return rows.map((row): KnowledgeHit => ({ ...passageOf(row), documentName: row.document_name, score: row.score }))
    },
    async searchVectors(baseIds, model, vector, limit) {
      if (baseIds.length === 0 || vector.length === 0) return []
      nearest ??= prepareNearest()
      const vectorBlob = blobOf(vector)
      const bits = signBits(vector)
      const rows = nearest.all({ vector: vectorBlob, bytes: vectorBlob.byteLength, bits, bitBytes: bits.byteLength, model, bases: JSON.stringify(baseIds), candidates: Math.max(NEAREST_CANDIDATES, limit * 10), limit })
      return rows.map((row): KnowledgeHit => ({ ...passageOf(row), documentName: row.document_name, score: 1 - row.distance }))
    },
    async readPassages(documentId, fromSeq, limit) {
      return statements.readPassages.all(documentId, fromSeq, limit).map(passageOf)
    },
    async usage(ownerId) {
      const row = statements.usage.get(ownerId)!
      return { documents: row.documents, bytes: row.bytes ?? 0, passages: row.passages ?? 0 }
    },
    async deleteOwner(ownerId) {
      for (const { id } of statements.basesOfOwner.all(ownerId)) await deleteBase(id)
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
