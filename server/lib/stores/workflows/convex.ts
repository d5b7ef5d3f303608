/** Saved workflows on Convex (see convex/workflows.ts). */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { SavedWorkflow } from '../../../../shared/types/workflow'
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
    async createWorkflow({ userId, definition, id, now = Date.now() }) {
      return await client.mutation(api.workflows.create, { secret, workflowId: id ?? crypto.randomUUID(), userId, name: definition.name, definition: JSON.stringify(definition), now }) as SavedWorkflow
    },
    async updateWorkflow(workflowId, definition, now = Date.now()) {
      return client.mutation(api.workflows.update, { secret, workflowId, name: definition.name, definition: JSON.stringify(definition), now })
    },
    async deleteWorkflow(workflowId) {
      return client.mutation(api.workflows.remove, { secret, workflowId })
    },
    async close() {},
  }
}
