/**
 * Long step outputs kept as files of the run's workspace (output-files.ts), against the real
 * workspace layer over the memory store: what the record keeps, what a resumed run reads back, the
 * final answer, and an output over the person's quota (kept in the record instead).
 */
import { describe, expect, it } from 'vitest'
import { RUN_OUTPUTS_FOLDER, RunOutputFiles, type OutputFileAccess } from '../../../server/lib/workflows/output-files'
import { Workspaces } from '../../../server/lib/tools/workspace/workspaces'
import { createMemoryWorkspaceStore } from '../../../server/lib/stores/workspaces/memory'
import type { WorkflowState } from '../../../shared/types/workflow'

const LIMITS = { fileBytes: 6 * 1024 * 1024, bytesPerUser: 50 * 1024 * 1024, filesPerUser: 100 }

/** The run's workspace as the runtime gives it to a run (create-server-runtime.ts). */
function runOutputs(workspaces: Workspaces, jobId: string, userId: string): OutputFileAccess {
  const workspaceId = workspaces.forRun(jobId)
  return {
    write: (path, text) => workspaces.writeRunOutput(jobId, userId, path, text),
    read: path => workspaces.readText(workspaceId, path).then(read => read.text, () => null),
  }
}

function setup(limits = LIMITS) {
  const workspaces = new Workspaces(createMemoryWorkspaceStore(), limits)
  const writes: string[] = []
  const access = runOutputs(workspaces, 'job-1', 'user-1')
  const counted = { write: async (path: string, text: string) => { writes.push(path); await access.write(path, text) }, read: access.read }
  return { workspaces, writes, files: new RunOutputFiles(counted, 1_000) }
}

const long = (char: string, length: number) => char.repeat(length)

function stateWith(outputs: { fetch: string, short: string, loop: string[], child: string }): WorkflowState {
  return {
    workflowId: 'w',
    workflowName: 'W',
    executionOrder: [],
    currentNodeId: null,
    nodeStates: {
      fetch: { status: 'completed', output: outputs.fetch },
      short: { status: 'completed', output: outputs.short },
      each: { status: 'completed', output: 'joined', iterations: outputs.loop.map(output => ({ status: 'completed' as const, output, state: { workflowId: 'w', workflowName: 'W', executionOrder: [], currentNodeId: null, nodeStates: { inner: { status: 'completed' as const, output } } } })) },
      sub: { status: 'completed', output: 'done', child: { workflowId: 'c', workflowName: 'C', definition: { version: 1, name: 'C', description: '', defaultModel: '', nodes: [], edges: [] }, state: { workflowId: 'c', workflowName: 'C', executionOrder: [], currentNodeId: null, nodeStates: { deep: { status: 'completed', output: outputs.child } } } } },
    },
  }
}

describe('long step outputs kept as files', () => {
  it('keeps each output over the limit as a file (loops and child runs too), its start in the state, and writes each once', async () => {
    const { workspaces, writes, files } = setup()
    const state = stateWith({ fetch: long('a', 5_000), short: 'short', loop: ['small', long('b', 3_000)], child: long('c', 2_500) })
    const kept = await files.kept(state)

    expect(kept.nodeStates.short).toBe(state.nodeStates.short)
    expect(kept.nodeStates.fetch!.outputFile).toEqual({ path: 'outputs/fetch.txt', chars: 5_000, bytes: 5_000 })
    expect(kept.nodeStates.fetch!.output!.startsWith(`${long('a', 1_000)}\n`)).toBe(true)
    expect(kept.nodeStates.fetch!.output).toContain('5,000 characters in all; the whole output is kept as the run\'s file outputs/fetch.txt')
    expect(kept.nodeStates.each!.iterations![0]).toBe(state.nodeStates.each!.iterations![0])
    expect(kept.nodeStates.each!.iterations![1]!.outputFile?.path).toBe('outputs/each/2.txt')
    expect(kept.nodeStates.each!.iterations![1]!.state!.nodeStates.inner!.outputFile?.path).toBe('outputs/each/2/inner.txt')
    expect(kept.nodeStates.sub!.child!.state!.nodeStates.deep!.outputFile?.path).toBe('outputs/sub/child/deep.txt')
    // What it was given is untouched: the run goes on with the whole outputs.
    expect(state.nodeStates.fetch!.output).toBe(long('a', 5_000))
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(state).length / 2)

    expect(writes.sort()).toEqual(['outputs/each/2.txt', 'outputs/each/2/inner.txt', 'outputs/fetch.txt', 'outputs/sub/child/deep.txt'])
    expect((await workspaces.readText('run:job-1', 'outputs/fetch.txt')).text).toBe(long('a', 5_000))
    // The next write of the same state writes nothing again; what viewers see between writes is the same.
    await files.kept(state)
    expect(writes).toHaveLength(4)
    expect(files.shown(state)).toEqual(kept)
  })

  it('reads the whole outputs back for a resumed run, and a file since deleted leaves its start', async () => {
    const { workspaces, files } = setup()
    const state = stateWith({ fetch: long('a', 5_000), short: 'short', loop: [long('b', 3_000)], child: long('c', 2_500) })
    const kept = await files.kept(state)
    // A new process (a restart): reads them back, and does not write them again.
    const { writes: after, files: restarted } = (() => {
      const writes: string[] = []
      const access = runOutputs(workspaces, 'job-1', 'user-1')
      return { writes, files: new RunOutputFiles({ write: async (path, text) => { writes.push(path); await access.write(path, text) }, read: access.read }, 1_000) }
    })()
    const restored = await restarted.restored(JSON.parse(JSON.stringify(kept)) as WorkflowState)
    expect(restored.nodeStates.fetch).toEqual({ status: 'completed', output: long('a', 5_000) })
    expect(restored.nodeStates.each!.iterations![0]!.output).toBe(long('b', 3_000))
    expect(restored.nodeStates.sub!.child!.state!.nodeStates.deep!.output).toBe(long('c', 2_500))
    expect(await restarted.kept(restored)).toEqual(kept)
    expect(after).toEqual([])

    await workspaces.deleteRunFiles('job-1')
    const gone = await restarted.restored(JSON.parse(JSON.stringify(kept)) as WorkflowState)
    expect(gone.nodeStates.fetch).toEqual(kept.nodeStates.fetch)
  })

  it('keeps a long answer as its output step\'s file when it is that, else as a file of its own', async () => {
    const { writes, files } = setup()
    const answer = long('z', 4_000)
    await files.kept({ workflowId: 'w', workflowName: 'W', executionOrder: [], currentNodeId: null, nodeStates: { out: { status: 'completed', output: answer } } })
    expect(await files.keptText(answer, 'out')).toContain('the run\'s file outputs/out.txt')
    expect(writes).toEqual(['outputs/out.txt'])
    expect(await files.keptText(`${answer}!`, 'out')).toContain('the run\'s file outputs/answer.txt')
    expect(await files.keptText('short')).toBe('short')
  })

  it('keeps an output in the record when it cannot be written (over the largest workspace file), and says so once', async () => {
    const failures: string[] = []
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { ...LIMITS, fileBytes: 2_000 })
    const files = new RunOutputFiles(runOutputs(workspaces, 'job-1', 'user-1'), 1_000, path => failures.push(path))
    const state = stateWith({ fetch: long('a', 5_000), short: 'short', loop: [], child: 'x' })
    const kept = await files.kept(state)
    expect(kept.nodeStates.fetch).toEqual({ status: 'completed', output: long('a', 5_000) })
    await files.kept(state)
    expect(failures).toEqual(['outputs/fetch.txt'])
  })

  it('keeps outputs out of the person\'s workspace quota, and deletes them with the account', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { ...LIMITS, bytesPerUser: 2_000 })
    const files = new RunOutputFiles(runOutputs(workspaces, 'job-1', 'user-1'), 1_000)
    const kept = await files.kept(stateWith({ fetch: long('a', 5_000), short: 'short', loop: [], child: 'x' }))
    expect(kept.nodeStates.fetch!.outputFile?.bytes).toBe(5_000)
    expect(await workspaces.usage('user-1')).toMatchObject({ bytes: 0, files: 0 })
    await workspaces.write('thread:t', 'user-1', 'notes.md', 'still room for my own files')
    await workspaces.deleteUser('user-1')
    expect(await workspaces.list('run:job-1')).toEqual([])
  })

  it('deletes a run\'s scratch files when it ends, and keeps its outputs until the run is deleted', async () => {
    const { workspaces, files } = setup()
    await workspaces.write('run:job-1', 'user-1', 'notes/scratch.md', 'working')
    await files.kept(stateWith({ fetch: long('a', 5_000), short: 'short', loop: [], child: 'x' }))
    await workspaces.deleteRunFiles('job-1', RUN_OUTPUTS_FOLDER)
    expect((await workspaces.list('run:job-1')).map(file => file.path)).toEqual(['outputs/fetch.txt'])
    await workspaces.deleteRunFiles('job-1')
    expect(await workspaces.list('run:job-1')).toEqual([])
  })
})
