import { describe, expect, it } from 'vitest'
import { subagentToolNames } from '../../../server/lib/jobs/subagents'

describe('a subagent\'s tools', () => {
  it('are its parent\'s when it asks for none, without task at the depth limit', () => {
    expect(subagentToolNames(undefined, ['task', 'read', 'calculate'], true)).toEqual(['task', 'read', 'calculate'])
    expect(subagentToolNames(undefined, ['task', 'read'], false)).toEqual(['read'])
    expect(subagentToolNames(undefined, [], true)).toEqual([])
  })

  it('may be fewer than its parent\'s, never more: a job offered only task cannot reach run_code', () => {
    expect(subagentToolNames(['read'], ['task', 'read', 'write'], true)).toEqual(['read'])
    expect(() => subagentToolNames(['run_code'], ['task'], true)).toThrow(/may not give a subagent "run_code".*which are task/)
    expect(() => subagentToolNames(['task'], ['task', 'read'], false)).toThrow(/no task at the depth limit/)
    expect(() => subagentToolNames(['read'], [], true)).toThrow(/which are none/)
  })
})
