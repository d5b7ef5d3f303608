/** In-memory workflow store for tests. */
import type { SavedWorkflow } from '../../../../shared/types/workflow'
import type { WorkflowStore } from './workflow-store'

/** Creates an empty in-memory workflow store. */
export function createMemoryWorkflowStore(): WorkflowStore {
  const workflows = new Map<string, SavedWorkflow>()
  return {
    async listWorkflows(userId) {
      return [...workflows.values()].filter(item => item.userId === userId).sort((a, b) => b.updatedAt - a.updatedAt).map(item => structuredClone(item))
    },
    async getWorkflow(id) {
      const item = workflows.get(id)
      return item ? structuredClone(item) : null
    },
    async createWorkflow({ userId, definition, id, now = Date.now() }) {
      const item: SavedWorkflow = { id: id ?? crypto.randomUUID(), userId, name: definition.name, definition: structuredClone(definition), createdAt: now, updatedAt: now }
      workflows.set(item.id, item)
      return structuredClone(item)
    },
    async updateWorkflow(id, definition, now = Date.now()) {
      const item = workflows.get(id)
      if (!item) return false
      Object.assign(item, { definition: structuredClone(definition), name: definition.name, updatedAt: now })
      return true
    },
    async deleteWorkflow(id) {
      return workflows.delete(id)
    },
    async close() {
      workflows.clear()
    },
  }
}
