import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { createMemoryThreadStore } from '../../server/utils/threads/memory'
import { createSqliteThreadStore } from '../../server/utils/threads/sqlite'
import { describeThreadStoreContract } from '../support/thread-store-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-threads-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeThreadStoreContract('memory', () => createMemoryThreadStore())
describeThreadStoreContract('sqlite', () => createSqliteThreadStore({ path: join(directory, `threads-${++file}.sqlite`) }))
