import { describe, expect, it } from 'vitest'
import { checkAttachmentQuota, checkMessageQuota, StorageQuotaError, withThreadQuota, withWorkflowQuota } from '../../../server/lib/stores/quotas'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { createMemoryWorkflowStore } from '../../../server/lib/stores/workflows/memory'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'

const quotas = { threadsPerUser: 3, messagesPerThread: 4, workflowsPerUser: 2, attachmentBytesPerUser: 3 * 1024 * 1024 }

describe('storage quotas', () => {
  it('refuses a user\'s thread past the quota, saying what to do, while other users go on', async () => {
    const threads = withThreadQuota(createMemoryThreadStore(), quotas)
    for (let index = 0; index < 3; index++) await threads.createThread({ userId: 'full' })
    const error = await threads.createThread({ userId: 'full' }).catch(caught => caught)
    expect(StorageQuotaError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ kind: 'threads', limit: 3, message: expect.stringMatching(/3 conversations.*Delete some/) })
    await expect(threads.createThread({ userId: 'other' })).resolves.toMatchObject({ userId: 'other' })
    // Deleting one makes room again.
    const [oldest] = await threads.listThreads('full')
    await threads.deleteThread(oldest!.id)
    await expect(threads.createThread({ userId: 'full' })).resolves.toMatchObject({ userId: 'full' })
  })

  it('refuses a workflow past the quota', async () => {
    const workflows = withWorkflowQuota(createMemoryWorkflowStore(), quotas)
    const definition = Object.values(WORKFLOW_EXAMPLES)[0] as WorkflowDefinition
    await workflows.createWorkflow({ userId: 'u', definition })
    await workflows.createWorkflow({ userId: 'u', definition })
    await expect(workflows.createWorkflow({ userId: 'u', definition })).rejects.toMatchObject({ kind: 'workflows', limit: 2 })
  })

  it('counts both messages of a turn against the per-thread quota', () => {
    expect(() => checkMessageQuota(2, 2, quotas)).not.toThrow()
    expect(() => checkMessageQuota(3, 2, quotas)).toThrow(/holds 4 messages.*Start a new conversation/)
  })

  it('counts the bytes of a person\'s files against their quota; 0 means no limit', () => {
    expect(() => checkAttachmentQuota(2 * 1024 * 1024, 1024 * 1024, quotas)).not.toThrow()
    expect(() => checkAttachmentQuota(2 * 1024 * 1024, 1024 * 1024 + 1, quotas)).toThrow(/pass 3 MiB.*Delete conversations with files/)
    expect(() => checkAttachmentQuota(10 ** 12, 10 ** 9, { ...quotas, attachmentBytesPerUser: 0 })).not.toThrow()
  })
})
