/**
 * Retrieval quality on a small question set shipped with the tests (tests/fixtures/knowledge: a
 * staff handbook of 25 sections written for this test, and 31 questions a person would ask, each
 * with the section that answers it): recall@5 — the share of questions whose section is among the
 * first five passages — with BM25 alone (SQLite FTS5, as the app runs offline), reported and held
 * to a floor so a change to cutting or search that makes it worse fails here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { passagesOf } from '../../../server/lib/knowledge/passages'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'
import { createSqliteKnowledgeStore } from '../../../server/lib/stores/knowledge/sqlite'
import type { KnowledgeStore } from '../../../server/lib/stores/knowledge/knowledge-store'

const fixtures = new URL('../../fixtures/knowledge/', import.meta.url)
const handbook = readFileSync(new URL('handbook.md', fixtures), 'utf8')
const questions = JSON.parse(readFileSync(new URL('questions.json', fixtures), 'utf8')) as Array<{ question: string, section: string }>
const directory = mkdtempSync(join(tmpdir(), 'or3-retrieval-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

async function recallAt5(store: KnowledgeStore): Promise<{ recall: number, missed: string[] }> {
  await store.saveBase({ id: 'b', ownerId: 'ann', name: 'Handbook', sharedWith: [], createdAt: 1, updatedAt: 1 })
  await store.saveDocument({ id: 'd', baseId: 'b', name: 'handbook.md', mediaType: 'text/markdown', bytes: handbook.length, contentHash: 'h', status: 'queued', passages: 0, addedBy: 'ann', createdAt: 1, updatedAt: 1 })
  await store.claimIndexing('d', 'h', 'me', 2e12, 1)
  await store.finishIndexing('d', 'h', 'me', { status: 'ready', passages: passagesOf({ kind: 'markdown', text: handbook }) }, 1)
  const missed: string[] = []
  for (const { question, section } of questions) {
    const hits = await store.search(['b'], question, 5)
    if (!hits.some(hit => hit.heading?.endsWith(`› ${section}`))) missed.push(`${question} (wanted ${section}; got ${hits.map(hit => hit.heading).join(', ') || 'nothing'})`)
  }
  await store.close()
  return { recall: (questions.length - missed.length) / questions.length, missed }
}

describe('retrieval quality (recall@5, BM25 only)', () => {
  for (const [name, open] of [['sqlite', () => createSqliteKnowledgeStore({ path: join(directory, 'recall.sqlite') })], ['memory', () => createMemoryKnowledgeStore()]] as const) {
    it(`finds the answering section among the first five for most questions (${name})`, async () => {
      const { recall, missed } = await recallAt5(open())
      console.log(`recall@5 (${name}, ${questions.length} questions): ${(recall * 100).toFixed(0)}%${missed.length ? `; missed: ${missed.join('; ')}` : ''}`)
      expect(recall, missed.join('\n')).toBeGreaterThanOrEqual(0.85)
    })
  }
})
