/** Saved workflows and their versions on Convex (see convex/workflows.ts). */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { SavedWorkflow, WorkflowVersion, WorkflowVersionSummary } from '../../../../shared/types/workflow'
import type { WorkflowStore } from './workflow-store'

/** A Convex workflow store. */
export function createConvexWorkflowStore(options: { client: ConvexFunctionClient, secret: string }): WorkflowStore {
  const { client, secret } = options
  return {
    async listWorkflows(userId) {
      return await client.query(api.workflows.list, { secret, userId }) as SavedWorkflow[]
    },
    async getWorkflow(workflowId) {
      return await client.query(api.workflows.get, { secret, workflowId }) as SavedWorkflow | null
    },
    async createWorkflow({ userId, definition, id, now = Date.now(), note }) {
      return await client.mutation(api.workflows.create, { secret, workflowId: id ?? crypto.randomUUID(), userId, name: definition.name, definition: JSON.stringify(definition), now, ...(note ? { note } : {}) }) as SavedWorkflow
    },
    async updateWorkflow(workflowId, definition, { by, note, now = Date.now() }) {
      return client.mutation(api.workflows.update, { secret, workflowId, name: definition.name, definition: JSON.stringify(definition), now, by, ...(note ? { note } : {}) })
    },
    async listWorkflowVersions(workflowId) {
      return await client.query(api.workflows.listVersions, { secret, workflowId }) as WorkflowVersionSummary[]
    },
    async getWorkflowVersion(workflowId, version) {
      return await client.query(api.workflows.getVersion, { secret, workflowId, version }) as WorkflowVersion | null
    },
    async deleteWorkflow(workflowId) {
      return client.mutation(api.workflows.remove, { secret, workflowId })
    },
    async close() {},
  }
}
