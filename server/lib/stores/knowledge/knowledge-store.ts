/**
 * Storage of knowledge bases (memory, sqlite), one contract for each: the bases, their documents
 * (each with its indexing state, leased to one indexer at a time), and their passages with a
 * full-text index (BM25). A document's file itself is kept in the workspace store
 * (knowledge/knowledge-files.ts); what is here is what searching and listing read.
 */
import type { KnowledgeBase, KnowledgeDocument, KnowledgeHit, KnowledgePassage } from '../../../../shared/types/knowledge'

/** A new passage: what the store numbers and keeps of it. */
export type NewKnowledgePassage = Pick<KnowledgePassage, 'text' | 'heading' | 'page'>

/** The passages' embeddings, one per passage in order, all from `model` and of one length. */
export interface PassageVectors {
  model: string
  values: Float32Array[]
}

/** What indexing one version of a document came to (`vectors` when an embeddings endpoint is set and answered). */
export type IndexingResult =
  | { status: 'ready', passages: NewKnowledgePassage[], pages?: number, vectors?: PassageVectors }
  | { status: 'failed', error: string }

/** What one person keeps in the bases they own. */
export interface KnowledgeUsage {
  documents: number
  bytes: number
  passages: number
}

export interface KnowledgeStore {
  /** Creates or replaces a base (its documents stay). */
  saveBase(base: KnowledgeBase): Promise<void>
  /** A base with its totals, or null. */
  getBase(id: string): Promise<StoredKnowledgeBase | null>
  /** The bases `ownerId` owns or that are shared with one of `groups` (names compared case-insensitively), with their totals, by name. */
  listBases(reader: { ownerId: string, groups: readonly string[] }): Promise<StoredKnowledgeBase[]>
  /** Deletes a base with its documents and passages. */
  deleteBase(id: string): Promise<void>
  /** Creates or replaces a document's row (a new version is saved `queued`, its passages kept until its indexing ends). */
  saveDocument(document: KnowledgeDocument): Promise<void>
  getDocument(id: string): Promise<KnowledgeDocument | null>
  /** A base's documents, by name. */
  listDocuments(baseId: string): Promise<KnowledgeDocument[]>
  /** Deletes a document with its passages. */
  deleteDocument(id: string): Promise<void>
  /**
   * Takes the indexing of a document's version `contentHash` for `holder` until `until`: true when
   * it is queued, or indexing under a lease that ran out (its indexer died), and still that version.
   */
  claimIndexing(id: string, contentHash: string, holder: string, until: number, now: number): Promise<boolean>
  /**
   * Ends the indexing `holder` claimed, in one step: the version's passages replace the document's
   * old ones and its status becomes `ready` (or `failed`). False, and nothing written, when the
   * claim was lost or the document changed or went meanwhile.
   */
  finishIndexing(id: string, contentHash: string, holder: string, result: IndexingResult, now: number): Promise<boolean>
  /** Documents waiting to be indexed or being indexed (to pick up after a restart), oldest first. */
  listUnindexed(limit: number): Promise<KnowledgeDocument[]>
  /** The passages of `baseIds` that best match `query`'s words, best first. */
  search(baseIds: readonly string[], query: string, limit: number): Promise<KnowledgeHit[]>
  /**
   * The passages of `baseIds` whose vectors from `model` are nearest `vector` (unit length, the
   * same length as theirs), best first; `score` is the cosine similarity.
   */
  searchVectors(baseIds: readonly string[], model: string, vector: Float32Array, limit: number): Promise<KnowledgeHit[]>
  /** A document's passages from `fromSeq`, in order, at most `limit`. */
  readPassages(documentId: string, fromSeq: number, limit: number): Promise<KnowledgePassage[]>
  /** What `ownerId` keeps in the bases they own. */
  usage(ownerId: string): Promise<KnowledgeUsage>
  /** Deletes every base `ownerId` owns (their account was deleted). */
  deleteOwner(ownerId: string): Promise<void>
  close(): Promise<void>
}

/** A base with its totals. */
export type StoredKnowledgeBase = KnowledgeBase & KnowledgeUsage
