/** The behaviour every saved-workflow store must have. */
import { useTestFixture } from './file-fixture'
import { describe, expect, it } from 'vitest'
import { WORKFLOW_EXAMPLES } from '../../server/lib/workflows/examples'
import { WORKFLOW_VERSIONS_KEPT, type WorkflowStore } from '../../server/lib/stores/workflows/workflow-store'

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
      expect(await store.updateWorkflow(first.id, { ...definition, name: 'Renamed' }, { by: 'a', now: 5 })).toBe(true)
      expect(await store.getWorkflow(first.id)).toMatchObject({ name: 'Renamed', definition: { name: 'Renamed' }, updatedAt: 5, version: 2 })
      expect((await store.listWorkflows('a')).map(item => item.id)).toEqual([first.id, second.id])
      expect(await store.deleteWorkflow(first.id)).toBe(true)
      expect(await store.getWorkflow(first.id)).toBeNull()
      expect(await store.deleteWorkflow(first.id)).toBe(false)
      expect(await store.updateWorkflow('missing', definition, { by: 'a' })).toBe(false)
    })

    it('keeps every save as a version (who, when, a note), newest first, each with its definition, and drops them with the workflow', async () => {
      const definition = WORKFLOW_EXAMPLES['triage-router']!
      const created = await store.createWorkflow({ userId: 'a', definition, now: 10, note: 'First draft' })
      expect(created.version).toBe(1)
      expect(await store.updateWorkflow(created.id, { ...definition, name: 'Second' }, { by: 'a', now: 20 })).toBe(true)
      expect(await store.updateWorkflow(created.id, { ...definition, name: 'Third' }, { by: 'admin-1', now: 30, note: 'Shorter prompts' })).toBe(true)
      expect(await store.getWorkflow(created.id)).toMatchObject({ name: 'Third', version: 3 })
      expect(await store.listWorkflowVersions(created.id)).toEqual([
        { workflowId: created.id, version: 3, name: 'Third', createdAt: 30, createdBy: 'admin-1', note: 'Shorter prompts' },
        { workflowId: created.id, version: 2, name: 'Second', createdAt: 20, createdBy: 'a' },
        { workflowId: created.id, version: 1, name: definition.name, createdAt: 10, createdBy: 'a', note: 'First draft' },
      ])
      expect(await store.getWorkflowVersion(created.id, 2)).toMatchObject({ version: 2, name: 'Second', definition: { ...definition, name: 'Second' } })
      expect(await store.getWorkflowVersion(created.id, 1)).toMatchObject({ definition })
      expect(await store.getWorkflowVersion(created.id, 4)).toBeNull()
      expect(await store.listWorkflowVersions('missing')).toEqual([])
      expect(await store.deleteWorkflow(created.id)).toBe(true)
      expect(await store.listWorkflowVersions(created.id)).toEqual([])
      expect(await store.getWorkflowVersion(created.id, 1)).toBeNull()
    })

    it(`keeps the newest ${WORKFLOW_VERSIONS_KEPT} versions of a workflow saved more often`, async () => {
      const definition = WORKFLOW_EXAMPLES['triage-router']!
      const created = await store.createWorkflow({ userId: 'a', definition, now: 1 })
      for (let save = 2; save <= WORKFLOW_VERSIONS_KEPT + 5; save++) await store.updateWorkflow(created.id, { ...definition, name: `Save ${save}` }, { by: 'a', now: save })
      const versions = await store.listWorkflowVersions(created.id)
      expect(versions).toHaveLength(WORKFLOW_VERSIONS_KEPT)
      expect(versions[0]!.version).toBe(WORKFLOW_VERSIONS_KEPT + 5)
      expect(versions.at(-1)!.version).toBe(6)
      expect(await store.getWorkflowVersion(created.id, 5)).toBeNull()
    })
  })
}
