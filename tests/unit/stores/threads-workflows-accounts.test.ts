import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLITE_MIGRATIONS } from '../../../server/lib/stores/sqlite/migrations'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { createSqliteThreadStore } from '../../../server/lib/stores/threads/sqlite'
import { describeThreadStoreContract } from '../../support/thread-store-contract'
import { describeAccountStoreContract } from '../../support/account-store-contract'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createSqliteAccountBackend } from '../../../server/lib/stores/accounts/sqlite'
import { describeWorkflowStoreContract } from '../../support/workflow-store-contract'
import { createMemoryWorkflowStore } from '../../../server/lib/stores/workflows/memory'
import { createSqliteWorkflowStore } from '../../../server/lib/stores/workflows/sqlite'
import { describeWorkflowRunStoreContract } from '../../support/workflow-run-store-contract'
import { createMemoryWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-memory'
import { createSqliteWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-sqlite'

const directory = mkdtempSync(join(tmpdir(), 'or3-threads-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeThreadStoreContract('memory', () => createMemoryThreadStore())
describeThreadStoreContract('sqlite', () => createSqliteThreadStore({ path: join(directory, `threads-${++file}.sqlite`) }))

describeWorkflowStoreContract('memory', () => createMemoryWorkflowStore())
describeWorkflowStoreContract('sqlite', () => createSqliteWorkflowStore({ path: join(directory, `workflows-${++file}.sqlite`) }))

describeWorkflowRunStoreContract('memory', () => createMemoryWorkflowRunStore())
describeWorkflowRunStoreContract('sqlite', () => createSqliteWorkflowRunStore({ path: join(directory, `runs-${++file}.sqlite`) }))

describeAccountStoreContract('memory', () => createMemoryAccountBackend())
describeAccountStoreContract('sqlite', () => createSqliteAccountBackend({ path: join(directory, `accounts-${++file}.sqlite`) }))

describe('sqlite workflow store upgrade', () => {
  it('keeps a workflow saved before versions as its version 1, and saves the next one as 2', async () => {
    const path = join(directory, 'workflows-upgrade.sqlite')
    const old = new Database(path)
    const before = SQLITE_MIGRATIONS.findIndex(sql => sql.includes('CREATE TABLE workflow_versions'))
    for (const sql of SQLITE_MIGRATIONS.slice(0, before)) old.exec(sql)
    old.pragma(`user_version = ${before}`)
    const definition = WORKFLOW_EXAMPLES['triage-router']!
    old.prepare('INSERT INTO workflows (id, user_id, name, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run('old-workflow', 'u', definition.name, JSON.stringify(definition), 1, 2)
    old.close()

    const store = createSqliteWorkflowStore({ path })
    expect(await store.getWorkflow('old-workflow')).toMatchObject({ version: 1, definition })
    expect(await store.listWorkflowVersions('old-workflow')).toEqual([{ workflowId: 'old-workflow', version: 1, name: definition.name, createdAt: 2, createdBy: 'u' }])
    expect(await store.updateWorkflow('old-workflow', { ...definition, name: 'After' }, { by: 'u', now: 3 })).toBe(true)
    expect((await store.listWorkflowVersions('old-workflow')).map(version => version.version)).toEqual([2, 1])
    await store.close()
  })
})
