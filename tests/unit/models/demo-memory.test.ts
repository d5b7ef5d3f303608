/** The offline demo model keeps, recalls and forgets memories when the memory tools are offered. */
import { describe, expect, it } from 'vitest'
import { aboutThem, memoryCallFor } from '../../../server/lib/models/demo/demo-memory'
import { planDemoReply } from '../../../server/lib/models/demo/demo-planner'

const offered = new Set(['remember', 'recall', 'forget', 'calculate'])
const tool = (name: string) => ({ type: 'function' as const, function: { name, description: name, parameters: { type: 'object' as const, properties: {} } } })

describe('the demo model\'s memory', () => {
  it('turns what a person says of themselves into a memory about them', () => {
    expect(aboutThem('my dog is called Rex.')).toBe('Their dog is called Rex')
    expect(aboutThem("I'm allergic to nuts and I like tea")).toBe('They are allergic to nuts and they like tea')
    expect(memoryCallFor('Remember that my dog is called Rex', offered)).toEqual({ name: 'remember', arguments: { text: 'Their dog is called Rex' } })
    expect(memoryCallFor('please forget that my dog is called Rex', offered)).toEqual({ name: 'forget', arguments: { matching: 'Their dog is called Rex' } })
    expect(memoryCallFor('What do you remember about me?', offered)).toEqual({ name: 'recall', arguments: {} })
    expect(memoryCallFor("What's my dog called?", offered)).toEqual({ name: 'recall', arguments: { query: 'dog' } })
    expect(memoryCallFor('Do you remember my coffee order?', offered)).toEqual({ name: 'recall', arguments: { query: 'coffee order' } })
  })

  it('leaves memory alone when the tools are not offered (memory off), and other questions to the other rules', () => {
    expect(memoryCallFor('Remember that my dog is called Rex', new Set())).toBeUndefined()
    expect(memoryCallFor('What is 2 + 2?', offered)).toBeUndefined()
    const plan = planDemoReply({ messages: [{ role: 'user', content: 'remember that I work on billing' }], tools: [...offered].map(tool) })
    expect(plan).toEqual({ kind: 'tool-calls', calls: [{ name: 'remember', arguments: { text: 'They work on billing' } }] })
    const answer = planDemoReply({
      messages: [
        { role: 'user', content: "what's my dog called?" },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'recall', arguments: '{"query":"dog"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ query: 'dog', memories: [{ id: 'm-1', text: 'Their dog is called Rex' }], kept: 1 }) },
      ],
      tools: [...offered].map(tool),
    })
    expect(answer.kind === 'text' && answer.text).toContain('Their dog is called Rex')
  })
})
