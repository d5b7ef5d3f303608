/**
 * Knowledge bases: collections of a person's documents (PDF, Word, Markdown, HTML, text, CSV) cut
 * into passages and indexed, which a conversation searches with `search_knowledge` and cites as
 * [n] sources that open the document at the passage. A base is its owner's, and may be shared with
 * groups to read or to edit.
 */

/** What a group may do with a base shared with it. */
export type KnowledgeAccess = 'read' | 'edit'

/** A base shared with a group (Admin → Groups). */
export interface KnowledgeShare {
  group: string
  access: KnowledgeAccess
}

/** A knowledge base as stored. */
export interface KnowledgeBase {
  id: string
  ownerId: string
  name: string
  description?: string
  sharedWith: KnowledgeShare[]
  createdAt: number
  updatedAt: number
}

/** A base as one person lists it: with its totals and what they may do with it. */
export interface KnowledgeBaseView extends KnowledgeBase {
  /** `owner`: theirs; `edit`/`read`: shared with a group of theirs. */
  access: 'owner' | KnowledgeAccess
  documents: number
  bytes: number
  passages: number
}

/** Where a document is on its way to being searchable. */
export type KnowledgeDocumentStatus = 'queued' | 'indexing' | 'ready' | 'failed'

/** The kinds of file a base takes, by media type, with the extensions that name them. */
export const KNOWLEDGE_FILE_TYPES = {
  'application/pdf': ['.pdf'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['.docx'],
  'text/markdown': ['.md', '.markdown'],
  'text/html': ['.html', '.htm'],
  'text/plain': ['.txt', '.text', '.log'],
  'text/csv': ['.csv'],
} as const satisfies Record<string, readonly string[]>

export type KnowledgeFileType = keyof typeof KNOWLEDGE_FILE_TYPES

/** One document of a base. */
export interface KnowledgeDocument {
  id: string
  baseId: string
  /** Its file name (unique within the base: adding a file of the same name makes a new version). */
  name: string
  mediaType: KnowledgeFileType
  bytes: number
  /** SHA-256 of the file, hex: the same content again is not indexed again. */
  contentHash: string
  status: KnowledgeDocumentStatus
  /** Why it could not be indexed (status `failed`). */
  error?: string
  /** Passages it was cut into (0 until indexed). */
  passages: number
  /** Pages (a PDF). */
  pages?: number
  /** Who added this version. */
  addedBy: string
  createdAt: number
  updatedAt: number
}

/** One indexed passage of a document, where it is in it. */
export interface KnowledgePassage {
  id: string
  documentId: string
  baseId: string
  /** Its order in the document, from 0. */
  seq: number
  text: string
  /** The headings it is under, outermost first, joined by " › ". */
  heading?: string
  /** Its page (a PDF), from 1. */
  page?: number
}

/** A passage a search found, with the document it is from. */
export interface KnowledgeHit extends KnowledgePassage {
  documentName: string
  /** Higher is better (comparable within one search only). */
  score: number
}

/** `GET /api/knowledge`: the bases a person may read, and the groups they are in (to share with). */
export interface KnowledgeList {
  bases: KnowledgeBaseView[]
  groups: string[]
  /** Largest document file (bytes). */
  fileBytes: number
}

/** `GET /api/knowledge/:base/documents/:document`: a document and a run of its passages (to read one where a citation points). */
export interface KnowledgeDocumentView {
  base: KnowledgeBaseView
  document: KnowledgeDocument
  passages: KnowledgePassage[]
  /** The seq of the first passage after these, when there are more. */
  nextSeq?: number
}

/** The longest name and description of a base. */
export const KNOWLEDGE_NAME_MAX = 100
export const KNOWLEDGE_DESCRIPTION_MAX = 500

/** Knowledge bases one conversation may search. */
export const KNOWLEDGE_BASES_PER_CHAT = 10
