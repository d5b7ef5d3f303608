import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { createSqliteThreadStore } from '../../../server/lib/stores/threads/sqlite'
import { describeThreadStoreContract } from '../../support/thread-store-contract'
import { describeAccountStoreContract } from '../../support/account-store-contract'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createSqliteAccountBackend } from '../../../server/lib/stores/accounts/sqlite'
import { describeWorkflowStoreContract } from '../../support/workflow-store-contract'
import { createMemoryWorkflowStore } from '../../../server/lib/stores/workflows/memory'
import { createSqliteWorkflowStore } from '../../../server/lib/stores/workflows/sqlite'

const directory = mkdtempSync(join(tmpdir(), 'or3-threads-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeThreadStoreContract('memory', () => createMemoryThreadStore())
describeThreadStoreContract('sqlite', () => createSqliteThreadStore({ path: join(directory, `threads-${++file}.sqlite`) }))

describeWorkflowStoreContract('memory', () => createMemoryWorkflowStore())
describeWorkflowStoreContract('sqlite', () => createSqliteWorkflowStore({ path: join(directory, `workflows-${++file}.sqlite`) }))

describeAccountStoreContract('memory', () => createMemoryAccountBackend())
describeAccountStoreContract('sqlite', () => createSqliteAccountBackend({ path: join(directory, `accounts-${++file}.sqlite`) }))
