/** The behaviour every saved-workflow store must have. */
import { useTestFixture } from './file-fixture'
import { describe, expect, it } from 'vitest'
import { WORKFLOW_EXAMPLES } from '../../server/lib/workflows/examples'
import type { WorkflowStore } from '../../server/lib/stores/workflows/workflow-store'

/** Registers the workflow store contract tests for one store. */
export function describeWorkflowStoreContract(name: string, createStore: () => WorkflowStore | Promise<WorkflowStore>): void {
  describe(`workflow store contract: ${name}`, () => {
    const store = useTestFixture('The store', createStore, store => store.close())

    it('creates, lists per user (newest change first), updates and deletes workflows', async () => {
      const definition = WORKFLOW_EXAMPLES['triage-router']!
      const first = await store.createWorkflow({ userId: 'a', definition, now: 1 })
      const second = await store.createWorkflow({ userId: 'a', definition: { ...definition, name: 'Second' }, now: 2 })
      await store.createWorkflow({ userId: 'b', definition, now: 3 })
      expect(first).toMatchObject({ userId: 'a', name: definition.name, definition, createdAt: 1, updatedAt: 1 })
      expect((await store.listWorkflows('a')).map(item => item.id)).toEqual([second.id, first.id])
      expect(await store.updateWorkflow(first.id, { ...definition, name: 'Renamed' }, 5)).toBe(true)
      expect(await store.getWorkflow(first.id)).toMatchObject({ name: 'Renamed', definition: { name: 'Renamed' }, updatedAt: 5 })
      expect((await store.listWorkflows('a')).map(item => item.id)).toEqual([first.id, second.id])
      expect(await store.deleteWorkflow(first.id)).toBe(true)
      expect(await store.getWorkflow(first.id)).toBeNull()
      expect(await store.deleteWorkflow(first.id)).toBe(false)
      expect(await store.updateWorkflow('missing', definition)).toBe(false)
    })
  })
}
