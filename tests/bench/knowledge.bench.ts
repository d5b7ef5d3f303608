/**
 * Knowledge bases (`npm run bench`): indexing speed without embeddings (a 300-page PDF through the
 * whole path: read in its own process, cut into passages, written with its FTS5 index), and
 * search latency over 10,000 and 100,000 passages in SQLite (BM25, four-word questions, p50 and
 * p99 of 200), by words alone and hybrid (BM25 and the nearest of 768-number vectors through
 * sqlite-vec, fused by reciprocal rank; the question's vector is made in process, so the
 * embeddings endpoint's own time is not in it). Numbers, not assertions; targets from issue 53.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bench, describe } from 'vitest'
import { KnowledgeBases } from '../../server/lib/knowledge/knowledge-bases'
import { KnowledgeIndexer } from '../../server/lib/knowledge/indexer'
import type { Embedder } from '../../server/lib/knowledge/embeddings'
import { PassageSearch } from '../../server/lib/knowledge/passage-search'
import { unitLength } from '../../server/lib/stores/knowledge/vector-math'
import { createSqliteKnowledgeStore } from '../../server/lib/stores/knowledge/sqlite'
import { createMemoryWorkspaceStore } from '../../server/lib/stores/workspaces/memory'
import { pdfOf } from '../support/documents'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const T = 1_700_000_000_000

/** A vocabulary of made-up words, used with a skew (some words common, most rare), as text is. */
const WORDS = Array.from({ length: 20_000 }, (_, index) => `w${index.toString(36)}x${(index * 7919 % 997).toString(36)}`)
let seed = 42
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const word = () => WORDS[Math.floor(WORDS.length * random() ** 3)]!
const sentence = (count: number) => Array.from({ length: count }, word).join(' ')

/** Dimensions of the bench's vectors (nomic-embed-text's; OpenAI's small model has 1,536). */
const DIMENSIONS = 768
const vector = () => unitLength(Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5))
/** An embedder without an endpoint: a vector per text at once. */
const inProcess: Embedder = { model: 'bench/embed', embed: async texts => texts.map(vector) }

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

describe('knowledge bases', () => {
  bench('indexing a 300-page PDF, and search by words and hybrid over 10,000 and 100,000 passages', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-knowledge-bench-'))
    const rows: Array<{ measure: string, value: string, target: string }> = []
    const store = createSqliteKnowledgeStore({ path: join(dir, 'or3.sqlite') })
    try {
      let indexer: KnowledgeIndexer
      const knowledge = new KnowledgeBases(store, createMemoryWorkspaceStore(), { enabled: true, fileBytes: 50e6, basesPerPerson: 10, perOwner: async () => ({ documents: 1e5, bytes: 1e9, passages: 1e8 }) }, async () => [], () => indexer.nudge())
      indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), { parseTimeoutMs: 120_000, parseMemoryMb: 512, passagesPerDocument: 20_000, leaseMs: 30_000 })
      const manual = await knowledge.create('bench', { name: 'Manual' })
      const pages = Array.from({ length: 300 }, (_, index) => Array.from({ length: 30 }, () => sentence(9)).join('\n') + `\nPage ${index + 1}`)
      const started = performance.now()
      await knowledge.addDocument('bench', manual.id, { name: 'manual.pdf', bytes: pdfOf(pages) })
      await indexer.whenIdle()
      const seconds = (performance.now() - started) / 1000
      const [document] = (await knowledge.documents('bench', manual.id)).documents
      rows.push({ measure: `indexing a 300-page PDF (${document!.passages.toLocaleString('en')} passages), no embeddings`, value: `${(300 / seconds).toFixed(0)} pages/s (${seconds.toFixed(1)} s)`, target: '≥ 20 pages/s' })

      const base = await knowledge.create('bench', { name: 'Corpus' })
      let passages = 0
      let documentNumber = 0
      for (const size of [10_000, 100_000]) {
        const fillStarted = performance.now()
        while (passages < size) {
          const id = `kd-bench-${documentNumber++}`
          await store.saveDocument({ id, baseId: base.id, name: `${id}.md`, mediaType: 'text/markdown', bytes: 1, contentHash: id, status: 'queued', passages: 0, addedBy: 'bench', createdAt: T, updatedAt: T })
          await store.claimIndexing(id, id, 'bench', T + 1e9, T)
          await store.finishIndexing(id, id, 'bench', { status: 'ready', passages: Array.from({ length: 1_000 }, () => ({ text: sentence(90), heading: sentence(3) })), vectors: { model: inProcess.model, values: Array.from({ length: 1_000 }, vector) } }, T)
          passages += 1_000
        }
        const fillSeconds = (performance.now() - fillStarted) / 1000
        rows.push({ measure: `${size.toLocaleString('en')} passages: written (FTS5 and vectors kept in step)`, value: `${fillSeconds.toFixed(1)} s`, target: '' })
        const hybrid = new PassageSearch(store, inProcess)
        for (const [label, search] of [['by words (BM25)', (question: string) => store.search([base.id, manual.id], question, 8)], ['hybrid (BM25 + vectors, fused)', (question: string) => hybrid.search([base.id, manual.id], question, 8)]] as const) {
          const times: number[] = []
          for (let query = 0; query < 200; query++) {
            const question = `what does ${sentence(4)} mean`
            const at = performance.now()
            await search(question)
            times.push(performance.now() - at)
          }
          times.sort((a, b) => a - b)
          rows.push({ measure: `  ${label} p50 / p99 (200 questions, 8 results)`, value: `${percentile(times, 0.5).toFixed(1)} / ${percentile(times, 0.99).toFixed(1)} ms`, target: size === 100_000 && label.startsWith('hybrid') ? 'p50 ≤ 50 ms' : '' })
        }
      }
    } finally {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      console.log('\nKnowledge bases')
      console.table(rows)
    }
  }, once)
})
