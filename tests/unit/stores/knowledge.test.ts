import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'
import { createSqliteKnowledgeStore } from '../../../server/lib/stores/knowledge/sqlite'
import { baseOf, describeKnowledgeStoreContract, documentOf } from '../../support/knowledge-store-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-knowledge-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeKnowledgeStoreContract('memory', () => createMemoryKnowledgeStore())
describeKnowledgeStoreContract('sqlite', () => createSqliteKnowledgeStore({ path: join(directory, `knowledge-${++file}.sqlite`) }))

describe('sqlite knowledge search over many passages', () => {
  it('leaves out a word nearly every passage holds when the question has others, and searches it when it is all there is', async () => {
    const store = createSqliteKnowledgeStore({ path: join(directory, `knowledge-${++file}.sqlite`) })
    await store.saveBase(baseOf('a', 'ann'))
    await store.saveDocument(documentOf('d', 'a'))
    await store.claimIndexing('d', 'hash-d', 'me', 2e12, 1)
    const passages = Array.from({ length: 2_100 }, (_, index) => ({ text: index === 1_500 ? 'The policy covers the yacht harbour.' : `Policy note number ${index}.` }))
    await store.finishIndexing('d', 'hash-d', 'me', { status: 'ready', passages }, 1)
    expect((await store.search(['a'], 'policies about the harbour', 3)).map(hit => hit.seq)).toEqual([1_500])
    expect(await store.search(['a'], 'policy', 3)).toHaveLength(3)
    await store.close()
  })
})
