/**
 * Knowledge bases on Convex (server/lib/stores/knowledge/convex.ts, functions in convex/knowledge.ts).
 *
 * A document's passages are written a batch at a time under a fresh `version` (a large PDF's
 * passages and vectors are far more than one transaction may write), and become the document's
 * passages in one step when its indexing ends and `live_version` points at them. Every read joins a
 * passage to its document and keeps it only when it is of the live version, so staged passages of an
 * indexing under way, of one whose indexer died, or of a deleted document are never found; they go in
 * scheduled passes (`knowledge_versions` lists what a document staged).
 *
 * Full-text search runs on Convex's search index over the passages' Porter stems (Convex does not
 * stem), so a question's word forms find the passage's as on sqlite. Vectors go into the table of
 * the smallest size that holds them, padded with zeros (which changes no cosine): Convex's vector
 * indexes have one length each, 2,048 at most.
 */
import { defineTable } from 'convex/server'
import { v } from 'convex/values'

/** The lengths of the vector tables; a vector goes into the smallest that holds it. */
export const KNOWLEDGE_VECTOR_SIZES = [256, 512, 768, 1024, 1536, 2048] as const
export type KnowledgeVectorSize = typeof KNOWLEDGE_VECTOR_SIZES[number]
export type KnowledgeVectorTable = `knowledge_vectors_${KnowledgeVectorSize}`

export const knowledgeVectorTable = v.union(...KNOWLEDGE_VECTOR_SIZES.map(size => v.literal(`knowledge_vectors_${size}` as KnowledgeVectorTable)))

/** The table a vector of `length` numbers goes into (padded to its size), or null past the largest. */
export function vectorTableFor(length: number): { table: KnowledgeVectorTable, size: KnowledgeVectorSize } | null {
  const size = KNOWLEDGE_VECTOR_SIZES.find(candidate => candidate >= length)
  return size ? { table: `knowledge_vectors_${size}`, size } : null
}

const vectorTable = (dimensions: KnowledgeVectorSize) => defineTable({
  document_key: v.string(),
  version: v.string(),
  seq: v.number(),
  /** `<base id>\n<model>`: a search names the bases it reads and the model its question's vector is from. */
  scope: v.string(),
  vector: v.array(v.float64()),
})
  .index('by_document_version', ['document_key', 'version'])
  .vectorIndex('by_vector', { vectorField: 'vector', dimensions, filterFields: ['scope'] })

export const knowledgeShare = v.object({ group: v.string(), access: v.union(v.literal('read'), v.literal('edit')) })

export const knowledgeTables = {
  knowledge_bases: defineTable({
    key: v.string(),
    owner_id: v.string(),
    name: v.string(),
    description: v.optional(v.string()),
    shared_with: v.array(knowledgeShare),
    created_at: v.number(),
    updated_at: v.number(),
    /** Its totals, kept in step by every change of its documents (a list of bases reads no documents). */
    documents: v.number(),
    bytes: v.number(),
    passages: v.number(),
  }).index('by_key', ['key']).index('by_owner', ['owner_id']),

  /** One row per group a base is shared with (its name folded to lower case), to list a group's bases. */
  knowledge_base_groups: defineTable({ group_key: v.string(), base_key: v.string() })
    .index('by_group', ['group_key']).index('by_base', ['base_key']),

  knowledge_documents: defineTable({
    key: v.string(),
    base_key: v.string(),
    owner_id: v.string(),
    name: v.string(),
    media_type: v.string(),
    bytes: v.number(),
    content_hash: v.string(),
    status: v.union(v.literal('queued'), v.literal('indexing'), v.literal('ready'), v.literal('failed')),
    error: v.optional(v.string()),
    passages: v.number(),
    pages: v.optional(v.number()),
    added_by: v.string(),
    created_at: v.number(),
    updated_at: v.number(),
    lease_holder: v.optional(v.string()),
    lease_until: v.optional(v.number()),
    /** The version whose passages are the document's (none before its first indexing, or after it failed). */
    live_version: v.optional(v.string()),
  })
    .index('by_key', ['key'])
    .index('by_base_and_name', ['base_key', 'name'])
    .index('by_owner', ['owner_id'])
    .index('by_status_and_updated', ['status', 'updated_at']),

  /** The versions a document has passages of (live or staged), so the ones it no longer needs can be found and dropped. */
  knowledge_versions: defineTable({ document_key: v.string(), version: v.string(), vector_table: v.optional(knowledgeVectorTable) })
    .index('by_document', ['document_key', 'version']),

  knowledge_passages: defineTable({
    document_key: v.string(),
    version: v.string(),
    seq: v.number(),
    base_key: v.string(),
    heading: v.optional(v.string()),
    page: v.optional(v.number()),
    text: v.string(),
    /** The Porter stems of its heading and text, for the search index. */
    stems: v.string(),
  })
    .index('by_document_version_seq', ['document_key', 'version', 'seq'])
    .searchIndex('by_stems', { searchField: 'stems', filterFields: ['base_key'] }),

  knowledge_vectors_256: vectorTable(256),
  knowledge_vectors_512: vectorTable(512),
  knowledge_vectors_768: vectorTable(768),
  knowledge_vectors_1024: vectorTable(1024),
  knowledge_vectors_1536: vectorTable(1536),
  knowledge_vectors_2048: vectorTable(2048),
}
