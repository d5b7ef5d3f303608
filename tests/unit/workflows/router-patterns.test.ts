import { describe, expect, it } from 'vitest'
import { compileRouterPattern, MAX_PATTERN_INPUT_CHARS } from '../../../server/lib/workflows/router-patterns'
import { validateWorkflow } from '../../../server/lib/workflows/validate'

function compiled(source: string) {
  const pattern = compileRouterPattern(source)
  if (!pattern.ok) throw new Error(pattern.error)
  return pattern
}

describe('router patterns', () => {
  it('match case-insensitively, like routers always did', () => {
    expect(compiled('urgent|asap').test('This is URGENT')).toBe(true)
    expect(compiled('^\\d{3}-\\d{4}$').test('555-0100')).toBe(true)
    expect(compiled('refund').test('a question about shipping')).toBe(false)
  })

  it('finish a catastrophic pattern on a hostile input in one pass (a backtracking engine would not finish)', () => {
    expect(compiled('^(a+)+$').test(`${'a'.repeat(5_000)}!`)).toBe(false)
    expect(compiled('(x+x+)+y').test('x'.repeat(5_000))).toBe(false)
    expect(compiled('^(a+)+$').test('a'.repeat(40))).toBe(true)
  })

  it('look only at the start of a very long input', () => {
    const input = `${'b'.repeat(MAX_PATTERN_INPUT_CHARS)}needle`
    expect(compiled('needle').test(input)).toBe(false)
    expect(compiled('needle').test(`needle${input}`)).toBe(true)
  })

  it('refuse back-references and look-arounds, saying why, when the workflow is checked', () => {
    expect(compileRouterPattern('(a)\\1')).toMatchObject({ ok: false })
    expect(compileRouterPattern('(?=a)')).toMatchObject({ ok: false })
    const result = validateWorkflow({
      version: 1,
      name: 'Look-ahead',
      defaultModel: 'm',
      nodes: [{ id: 'start', kind: 'start' }, { id: 'route', kind: 'router', mode: 'condition', conditions: [{ branch: 'out', matches: '(?=a)a' }], defaultBranch: 'out' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'route' }, { from: 'route', to: 'out', branch: 'out' }],
    }, () => true)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems).toEqual([expect.objectContaining({ nodeId: 'route', message: expect.stringContaining('look-arounds are not supported') })])
  })
})
