import { describe, expect, it } from 'vitest'
import { jsonDepth, MAX_JSON_DEPTH } from '../../../server/lib/http/read-json-body'

function nested(depth: number): unknown {
  let value: unknown = 'leaf'
  for (let level = 0; level < depth; level++) value = level % 2 ? { inner: value } : [value]
  return value
}

describe('jsonDepth', () => {
  it('counts how deep arrays and objects nest', () => {
    expect(jsonDepth('text')).toBe(0)
    expect(jsonDepth({})).toBe(1)
    expect(jsonDepth({ messages: [{ role: 'user', content: 'hi' }] })).toBe(3)
    expect(jsonDepth(nested(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH)
  })

  it('walks without recursion, so 100,000 levels neither overflow the stack nor run to the bottom', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    expect(jsonDepth(deep, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1)
    expect(jsonDepth(deep)).toBe(100_000)
  })
})
