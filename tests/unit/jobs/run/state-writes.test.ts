/** A workflow run's state writes: changes that come faster than writes are written together, each waiter told when its change is kept. */
import { describe, expect, it } from 'vitest'
import { CoalescedStateWrites } from '../../../../server/lib/jobs/run/state-writes'
import type { WorkflowState } from '../../../../shared/types/workflow'

const state = (): WorkflowState => ({ workflowId: 'w', workflowName: 'W', nodeStates: {}, executionOrder: [], currentNodeId: null, failedNodeId: null })

describe('coalesced state writes', () => {
  it('writes a burst of changes once, as a copy of the latest, and resolves every change once it is stored', async () => {
    const written: WorkflowState[] = []
    let release: () => void = () => {}
    const writes = new CoalescedStateWrites(async (copy) => {
      written.push(copy)
      await new Promise<void>(resolve => (release = resolve))
      return true
    })
    const live = state()
    const first = writes.changed(live)
    live.executionOrder.push('a')
    const second = writes.changed(live)
    await new Promise(resolve => setImmediate(resolve))
    // One write for both, taken after the burst.
    expect(written.map(copy => copy.executionOrder)).toEqual([['a']])
    // While it is in flight, more changes wait for the next write, which takes them all.
    live.executionOrder.push('b')
    const third = writes.changed(live)
    live.executionOrder.push('c')
    const fourth = writes.changed(live)
    release()
    expect(await Promise.all([first, second])).toEqual([true, true])
    await new Promise(resolve => setImmediate(resolve))
    await new Promise(resolve => setImmediate(resolve))
    expect(written.map(copy => copy.executionOrder)).toEqual([['a'], ['a', 'b', 'c']])
    // What was written is a copy: later changes do not reach it.
    live.executionOrder.push('d')
    expect(written[1]!.executionOrder).toEqual(['a', 'b', 'c'])
    release()
    expect(await Promise.all([third, fourth])).toEqual([true, true])
    await writes.settled()
    expect(written).toHaveLength(2)
  })

  it('tells the waiters when the store refused or failed, and settles', async () => {
    const refused = new CoalescedStateWrites(async () => false)
    expect(await refused.changed(state())).toBe(false)
    const failing = new CoalescedStateWrites(async () => { throw new Error('disk full') })
    expect(await failing.changed(state())).toBe(false)
    await failing.settled()
  })
})
