/** Messages to a workflow's running agent step: kept in the run's own queue, taken by that step only, gone with the run. */
import { describe, expect, it } from 'vitest'
import { WorkflowSteers } from '../../../server/lib/jobs/workflow-steers'
import { createMemoryMessageQueue } from '../../../server/lib/stores/threads/message-queue-memory'
import type { BackgroundJob } from '../../../shared/types/job'

function run(status: BackgroundJob['status'], research: 'running' | 'completed' = 'running'): BackgroundJob {
  return {
    id: 'job-1', userId: 'ana', threadId: 'workflow:w', messageId: 'm', type: 'workflow', status, model: 'workflow', content: '', reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [], resumeCount: 0, startedAt: 1, updatedAt: 1,
    request: { model: 'm', messages: [], fields: {}, workflow: { workflowId: 'w', prompt: 'p', definition: { version: 1, name: 'W', defaultModel: 'm', nodes: [{ id: 'start', kind: 'start' }, { id: 'research', kind: 'agent' }, { id: 'check', kind: 'approval' }], edges: [] } } },
    workflowState: { workflowId: 'w', workflowName: 'W', nodeStates: { research: { status: research }, check: { status: 'running' } }, executionOrder: [], currentNodeId: 'research' },
  } as unknown as BackgroundJob
}

describe('workflow steers', () => {
  it('go to a running agent step only, are taken by that step once, and leave with the run', async () => {
    const queue = createMemoryMessageQueue()
    let job = run('streaming')
    const steers = new WorkflowSteers(queue, { getJob: async () => job })
    await expect(steers.send(job, 'check', 'hi')).rejects.toMatchObject({ message: expect.stringContaining('not an agent step running now') })
    await expect(steers.send(job, 'missing', 'hi')).rejects.toMatchObject({ message: expect.stringContaining('"missing"') })
    const { id } = await steers.send(job, 'research', 'only trains')
    expect(await steers.steeringFor(job, 'other').take(new Set())).toEqual([])
    const steering = steers.steeringFor(job, 'research')
    expect(await steering.take(new Set())).toEqual([{ id, content: 'only trains' }])
    // Already in the step's checkpoint (a crash before its entry went): taken out, not given again.
    expect(await steering.take(new Set([id]))).toEqual([])
    expect(await queue.list('run:job-1')).toEqual([])
    await steers.send(job, 'research', 'unread')
    job = run('complete', 'completed')
    await expect(steers.send(job, 'research', 'late')).rejects.toMatchObject({ message: expect.stringContaining('ended') })
    await steers.recover()
    expect(await queue.list('run:job-1')).toEqual([])
  })
})
