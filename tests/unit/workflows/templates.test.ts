import { describe, expect, it } from 'vitest'
import { renderArguments, renderTemplate, TemplateTooLargeError } from '../../../server/lib/workflows/templates'

const scope = { prompt: 'P'.repeat(10), input: 'in', nodes: { a: 'A' } }

describe('renderTemplate', () => {
  it('fills references and empties unknown ones', () => {
    expect(renderTemplate('{{input}}/{{ nodes.a }}/{{nodes.missing}}', scope)).toBe('in/A/')
  })

  it('refuses a rendering longer than the budget without building it', () => {
    expect(() => renderTemplate('{{prompt}}'.repeat(5), scope, 49)).toThrow(TemplateTooLargeError)
    expect(renderTemplate('{{prompt}}'.repeat(5), scope, 50)).toHaveLength(50)
  })

  it('counts every string of tool arguments against one budget', () => {
    const args = { a: '{{prompt}}', list: ['{{prompt}}', { deep: '{{prompt}}' }], n: 3 }
    expect(renderArguments(args, scope, 30)).toEqual({ a: scope.prompt, list: [scope.prompt, { deep: scope.prompt }], n: 3 })
    expect(() => renderArguments(args, scope, 29)).toThrow(/longer than 29 characters/)
  })
})
