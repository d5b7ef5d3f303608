/** Saved workflows and their versions in the app's sqlite file. */
import { openSqliteDatabase } from '../sqlite/database'
import type { SavedWorkflow, WorkflowVersion, WorkflowVersionSummary } from '../../../../shared/types/workflow'
import { WORKFLOW_VERSIONS_KEPT, type WorkflowStore } from './workflow-store'

interface WorkflowRow { id: string, user_id: string, name: string, definition: string, created_at: number, updated_at: number, version: number }
interface VersionRow { workflow_id: string, version: number, name: string, definition: string, created_at: number, created_by: string, note: string | null }

function toWorkflow(row: WorkflowRow): SavedWorkflow {
  return { id: row.id, userId: row.user_id, name: row.name, definition: JSON.parse(row.definition), createdAt: row.created_at, updatedAt: row.updated_at, version: row.version }
}

function toSummary(row: Omit<VersionRow, 'definition'>): WorkflowVersionSummary {
  return { workflowId: row.workflow_id, version: row.version, name: row.name, createdAt: row.created_at, createdBy: row.created_by, ...(row.note ? { note: row.note } : {}) }
}

/** Opens the workflow store in the sqlite file at `path`. */
export function createSqliteWorkflowStore(options: { path: string }): WorkflowStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    list: db.prepare<[string], WorkflowRow>('SELECT * FROM workflows WHERE user_id = ? ORDER BY updated_at DESC'),
    get: db.prepare<[string], WorkflowRow>('SELECT * FROM workflows WHERE id = ?'),
    insert: db.prepare('INSERT INTO workflows (id, user_id, name, definition, created_at, updated_at, version) VALUES (@id, @userId, @name, @definition, @now, @now, 1)'),
    update: db.prepare<{ id: string, name: string, definition: string, now: number }, { version: number }>('UPDATE workflows SET name = @name, definition = @definition, updated_at = @now, version = version + 1 WHERE id = @id RETURNING version'),
    remove: db.prepare('DELETE FROM workflows WHERE id = ?'),
    insertVersion: db.prepare('INSERT INTO workflow_versions (workflow_id, version, name, definition, created_at, created_by, note) VALUES (@workflowId, @version, @name, @definition, @now, @by, @note)'),
    pruneVersions: db.prepare('DELETE FROM workflow_versions WHERE workflow_id = ? AND version <= ?'),
    listVersions: db.prepare<[string], Omit<VersionRow, 'definition'>>('SELECT workflow_id, version, name, created_at, created_by, note FROM workflow_versions WHERE workflow_id = ? ORDER BY version DESC'),
    getVersion: db.prepare<[string, number], VersionRow>('SELECT * FROM workflow_versions WHERE workflow_id = ? AND version = ?'),
    removeVersions: db.prepare('DELETE FROM workflow_versions WHERE workflow_id = ?'),
  }
  // A workflow and its version are written together, or not at all.
  const create = db.transaction((row: { id: string, userId: string, name: string, definition: string, now: number, note: string | null }) => {
    statements.insert.run(row)
    statements.insertVersion.run({ workflowId: row.id, version: 1, name: row.name, definition: row.definition, now: row.now, by: row.userId, note: row.note })
  })
  const update = db.transaction((row: { id: string, name: string, definition: string, now: number, by: string, note: string | null }): boolean => {
    const updated = statements.update.get({ id: row.id, name: row.name, definition: row.definition, now: row.now })
    if (!updated) return false
    statements.insertVersion.run({ workflowId: row.id, version: updated.version, name: row.name, definition: row.definition, now: row.now, by: row.by, note: row.note })
    statements.pruneVersions.run(row.id, updated.version - WORKFLOW_VERSIONS_KEPT)
    return true
  })
  const remove = db.transaction((id: string): boolean => {
    statements.removeVersions.run(id)
    return statements.remove.run(id).changes > 0
  })
  return {
    async listWorkflows(userId) {
      return statements.list.all(userId).map(toWorkflow)
    },
    async getWorkflow(id) {
      const row = statements.get.get(id)
      return row ? toWorkflow(row) : null
    },
    async createWorkflow({ userId, definition, id, now = Date.now(), note }) {
      const workflowId = id ?? crypto.randomUUID()
      create({ id: workflowId, userId, name: definition.name, definition: JSON.stringify(definition), now, note: note ?? null })
      return toWorkflow(statements.get.get(workflowId)!)
    },
    async updateWorkflow(id, definition, { by, note, now = Date.now() }) {
      return update({ id, name: definition.name, definition: JSON.stringify(definition), now, by, note: note ?? null })
    },
    async listWorkflowVersions(id) {
      return statements.listVersions.all(id).map(toSummary)
    },
    async getWorkflowVersion(id, version) {
      const row = statements.getVersion.get(id, version)
      return row ? { ...toSummary(row), definition: JSON.parse(row.definition) } as WorkflowVersion : null
    },
    async deleteWorkflow(id) {
      return remove(id)
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
