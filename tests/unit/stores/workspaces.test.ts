import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { createMemoryWorkspaceStore } from '../../../server/lib/stores/workspaces/memory'
import { createSqliteWorkspaceStore } from '../../../server/lib/stores/workspaces/sqlite'
import { describeWorkspaceStoreContract } from '../../support/workspace-store-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-workspaces-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let file = 0

describeWorkspaceStoreContract('memory', () => createMemoryWorkspaceStore())
describeWorkspaceStoreContract('sqlite', () => createSqliteWorkspaceStore({ path: join(directory, `workspaces-${++file}.sqlite`) }))
