/**
 * The knowledge-base tables of the app's sqlite file (migration 22 of sqlite/migrations.ts; never
 * edited once shipped): documents' rows (their indexing leased to one indexer at a time) and their
 * passages, searched by BM25 through an FTS5 index kept in step by triggers (Porter stems, so
 * "refunded" finds "refund"), with its vocabulary (how many passages hold each stem) to leave out
 * the words nearly every passage has. A base's groups are a table of their own, to list what is shared.
 */
export const KNOWLEDGE_TABLES = `
  CREATE TABLE knowledge_bases (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    shared_with TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX knowledge_bases_by_owner ON knowledge_bases (owner_id);
  CREATE TABLE knowledge_base_groups (
    group_key TEXT NOT NULL,
    base_id TEXT NOT NULL,
    PRIMARY KEY (group_key, base_id)
  ) WITHOUT ROWID;
  CREATE INDEX knowledge_base_groups_by_base ON knowledge_base_groups (base_id);
  CREATE TABLE knowledge_documents (
    id TEXT PRIMARY KEY,
    base_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'indexing', 'ready', 'failed')),
    error TEXT,
    passages INTEGER NOT NULL DEFAULT 0,
    pages INTEGER,
    added_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    lease_holder TEXT,
    lease_until INTEGER
  );
  CREATE UNIQUE INDEX knowledge_documents_by_base_name ON knowledge_documents (base_id, name);
  CREATE INDEX knowledge_documents_by_owner ON knowledge_documents (owner_id);
  CREATE INDEX knowledge_documents_unindexed ON knowledge_documents (updated_at) WHERE status IN ('queued', 'indexing');
  CREATE TABLE knowledge_passages (
    document_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    base_id TEXT NOT NULL,
    heading TEXT,
    page INTEGER,
    text TEXT NOT NULL
  );
  CREATE UNIQUE INDEX knowledge_passages_by_document ON knowledge_passages (document_id, seq);
  CREATE VIRTUAL TABLE knowledge_passages_fts USING fts5(text, heading, content = 'knowledge_passages', content_rowid = 'rowid', tokenize = 'porter unicode61 remove_diacritics 2');
  CREATE TRIGGER knowledge_passages_fts_insert AFTER INSERT ON knowledge_passages BEGIN
    INSERT INTO knowledge_passages_fts (rowid, text, heading) VALUES (new.rowid, new.text, new.heading);
  END;
  CREATE VIRTUAL TABLE knowledge_passages_vocab USING fts5vocab(knowledge_passages_fts, 'row');
  CREATE TRIGGER knowledge_passages_fts_delete AFTER DELETE ON knowledge_passages BEGIN
    INSERT INTO knowledge_passages_fts (knowledge_passages_fts, rowid, text, heading) VALUES ('delete', old.rowid, old.text, old.heading);
  END;
  `

/**
 * Migration 23: the passages' embeddings, one row per passage, gone with their passage. Each is
 * kept twice: whole (float32, `knowledge_vectors`) and as the signs of its numbers (one bit each,
 * `knowledge_vector_bits`, 32 times smaller, laid out by base so a scan reads them in a row). A
 * search by meaning scans the small bits by Hamming distance (sqlite-vec) for a hundred or so
 * candidates, then ranks only those by the cosine of their whole vectors: scanning 100,000 whole
 * vectors read 300 MB per question.
 */
export const KNOWLEDGE_VECTOR_TABLES = `
  CREATE TABLE knowledge_vectors (
    passage_rowid INTEGER PRIMARY KEY,
    vector BLOB NOT NULL
  );
  CREATE TABLE knowledge_vector_bits (
    base_id TEXT NOT NULL,
    model TEXT NOT NULL,
    passage_rowid INTEGER NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (base_id, model, passage_rowid)
  ) WITHOUT ROWID;
  CREATE INDEX knowledge_vector_bits_by_passage ON knowledge_vector_bits (passage_rowid);
  CREATE TRIGGER knowledge_passages_vectors_delete AFTER DELETE ON knowledge_passages BEGIN
    DELETE FROM knowledge_vectors WHERE passage_rowid = old.rowid;
    DELETE FROM knowledge_vector_bits WHERE passage_rowid = old.rowid;
  END;
  `
