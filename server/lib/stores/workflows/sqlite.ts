/** Saved workflows in the app's sqlite file. */
import { openSqliteDatabase } from '../sqlite/database'
import type { SavedWorkflow } from '../../../../shared/types/workflow'
import type { WorkflowStore } from './workflow-store'

interface WorkflowRow { id: string, user_id: string, name: string, definition: string, created_at: number, updated_at: number }

function toWorkflow(row: WorkflowRow): SavedWorkflow {
  return { id: row.id, userId: row.user_id, name: row.name, definition: JSON.parse(row.definition), createdAt: row.created_at, updatedAt: row.updated_at }
}

/** Opens the workflow store in the sqlite file at `path`. */
export function createSqliteWorkflowStore(options: { path: string }): WorkflowStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    list: db.prepare<[string], WorkflowRow>('SELECT * FROM workflows WHERE user_id = ? ORDER BY updated_at DESC'),
    get: db.prepare<[string], WorkflowRow>('SELECT * FROM workflows WHERE id = ?'),
    insert: db.prepare('INSERT INTO workflows (id, user_id, name, definition, created_at, updated_at) VALUES (@id, @userId, @name, @definition, @now, @now)'),
    update: db.prepare('UPDATE workflows SET name = @name, definition = @definition, updated_at = @now WHERE id = @id'),
    remove: db.prepare('DELETE FROM workflows WHERE id = ?'),
  }
  return {
    async listWorkflows(userId) {
      return statements.list.all(userId).map(toWorkflow)
    },
    async getWorkflow(id) {
      const row = statements.get.get(id)
      return row ? toWorkflow(row) : null
    },
    async createWorkflow({ userId, definition, id, now = Date.now() }) {
      const workflowId = id ?? crypto.randomUUID()
      statements.insert.run({ id: workflowId, userId, name: definition.name, definition: JSON.stringify(definition), now })
      return toWorkflow(statements.get.get(workflowId)!)
    },
    async updateWorkflow(id, definition, now = Date.now()) {
      return statements.update.run({ id, name: definition.name, definition: JSON.stringify(definition), now }).changes > 0
    },
    async deleteWorkflow(id) {
      return statements.remove.run(id).changes > 0
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
