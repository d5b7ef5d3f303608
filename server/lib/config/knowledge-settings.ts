/**
 * The knowledge-base settings (`knowledge.*` of server-config.ts): whether people may keep
 * knowledge bases, and the bounds of what they put in them and of reading a file.
 */
import { z } from 'zod'
import { group, setting } from './setting-types'

/** Every knowledge setting, with its default and what it means. */
export function knowledgeSettings() {
  return group({
    enabled: setting(z.boolean(), true,
      'Offer knowledge bases (Knowledge in the menu): people add documents (PDF, DOCX, Markdown, HTML, text, CSV), attach bases to a conversation, and the model searches them with `search_knowledge` (policy name `capability:knowledge`, guests denied unless a rule allows it) and cites the passages. Search is SQLite full-text (BM25): it works offline.'),
    fileBytes: setting(z.number().int().min(10_000).max(200_000_000), 20 * 1024 * 1024,
      'Largest document file; a larger one is refused saying so.'),
    bytesPerPerson: setting(z.number().int().min(100_000).max(100_000_000_000), 200 * 1024 * 1024,
      'Bytes of documents one person may keep in the bases they own.'),
    documentsPerPerson: setting(z.number().int().min(1).max(100_000), 1_000,
      'Documents one person may keep in the bases they own.'),
    basesPerPerson: setting(z.number().int().min(1).max(1_000), 50,
      'Knowledge bases one person may own.'),
    passagesPerDocument: setting(z.number().int().min(10).max(200_000), 20_000,
      'Passages (about a thousand characters each) one document may be cut into; a longer document is refused when it is read, saying so.'),
    parseTimeoutMs: setting(z.number().int().min(1_000).max(600_000), 60_000,
      'Longest reading one file may take (in a worker thread of its own); past it the document is marked failed, saying so.'),
    parseMemoryMb: setting(z.number().int().min(64).max(8_192), 256,
      'Memory reading one file may use (MiB; a PDF or a zip bomb past it is stopped, and the document marked failed).'),
    indexLeaseMs: setting(z.number().int().min(1_000).max(600_000), 30_000,
      'How long an instance\'s claim on a document it indexes lasts without being renewed (it renews it while reading): after a crash, the document is indexed again once this has passed.'),
    passagesUpFront: setting(z.number().int().min(0).max(10), 0,
      'Passages searched with a conversation\'s question and put into its instructions before the model answers, besides `search_knowledge`; `0`: none (the model searches when it needs to).'),
  })
}
