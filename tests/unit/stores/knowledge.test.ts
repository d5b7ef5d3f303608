import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'
import { createSqliteKnowledgeStore } from '../../../server/lib/stores/knowledge/sqlite'
import { describeKnowledgeStoreContract } from '../../support/knowledge-store-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-knowledge-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeKnowledgeStoreContract('memory', () => createMemoryKnowledgeStore())
describeKnowledgeStoreContract('sqlite', () => createSqliteKnowledgeStore({ path: join(directory, `knowledge-${++file}.sqlite`) }))
