/** In-memory workflow store for tests. */
import type { SavedWorkflow, WorkflowVersion } from '../../../../shared/types/workflow'
import { WORKFLOW_VERSIONS_KEPT, type WorkflowStore } from './workflow-store'

/** Creates an empty in-memory workflow store. */
export function createMemoryWorkflowStore(): WorkflowStore {
  const workflows = new Map<string, SavedWorkflow>()
  /** Each workflow's versions, oldest first. */
  const versions = new Map<string, WorkflowVersion[]>()
  const keep = (item: SavedWorkflow, by: string, note: string | undefined) => {
    const kept = versions.get(item.id) ?? []
    kept.push({ workflowId: item.id, version: item.version, name: item.name, definition: structuredClone(item.definition), createdAt: item.updatedAt, createdBy: by, ...(note ? { note } : {}) })
    versions.set(item.id, kept.slice(-WORKFLOW_VERSIONS_KEPT))
  }
  return {
    async listWorkflows(userId) {
      return [...workflows.values()].filter(item => item.userId === userId).sort((a, b) => b.updatedAt - a.updatedAt).map(item => structuredClone(item))
    },
    async getWorkflow(id) {
      const item = workflows.get(id)
      return item ? structuredClone(item) : null
    },
    async createWorkflow({ userId, definition, id, now = Date.now(), note }) {
      const item: SavedWorkflow = { id: id ?? crypto.randomUUID(), userId, name: definition.name, definition: structuredClone(definition), createdAt: now, updatedAt: now, version: 1 }
      workflows.set(item.id, item)
      keep(item, userId, note)
      return structuredClone(item)
    },
    async updateWorkflow(id, definition, { by, note, now = Date.now() }) {
      const item = workflows.get(id)
      if (!item) return false
      Object.assign(item, { definition: structuredClone(definition), name: definition.name, updatedAt: now, version: item.version + 1 })
      keep(item, by, note)
      return true
    },
    async listWorkflowVersions(id) {
      return (versions.get(id) ?? []).map(({ definition: _definition, ...summary }) => ({ ...summary })).reverse()
    },
    async getWorkflowVersion(id, version) {
      const found = versions.get(id)?.find(item => item.version === version)
      return found ? structuredClone(found) : null
    },
    async deleteWorkflow(id) {
      versions.delete(id)
      return workflows.delete(id)
    },
    async close() {
      workflows.clear()
      versions.clear()
    },
  }
}
