/** The offline demo model searches the attached knowledge bases for a question and cites what it found. */
import { describe, expect, it } from 'vitest'
import { planDemoReply } from '../../../server/lib/models/demo/demo-planner'

const tool = (name: string) => ({ type: 'function' as const, function: { name, description: name, parameters: { type: 'object' as const, properties: {} } } })
const tools = ['search_knowledge', 'calculate', 'get_current_time'].map(tool)

describe('the demo model and knowledge bases', () => {
  it('searches for a question when search_knowledge is offered, leaving sums, the time and greetings to their rules', () => {
    expect(planDemoReply({ messages: [{ role: 'user', content: 'How much are meals refunded?' }], tools })).toEqual({ kind: 'tool-calls', calls: [{ name: 'search_knowledge', arguments: { query: 'How much are meals refunded?' } }] })
    expect(planDemoReply({ messages: [{ role: 'user', content: 'What is 2 + 2?' }], tools })).toMatchObject({ calls: [{ name: 'calculate' }] })
    expect(planDemoReply({ messages: [{ role: 'user', content: 'What time is it in Tokyo?' }], tools })).toMatchObject({ calls: [{ name: 'get_current_time' }] })
    expect(planDemoReply({ messages: [{ role: 'user', content: 'hello' }], tools })).toMatchObject({ kind: 'text' })
    expect(planDemoReply({ messages: [{ role: 'user', content: 'How much are meals refunded?' }], tools: [tool('calculate')] })).toMatchObject({ kind: 'text' })
  })

  it('answers with the best passage quoted and every passage cited by its link', () => {
    const link = '/knowledge/kb-1/kd-1?passage=1'
    const plan = planDemoReply({
      messages: [
        { role: 'user', content: 'How much are meals refunded?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search_knowledge', arguments: '{"query":"meals"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ query: 'meals', searched: ['Handbook'], results: [{ n: 1, source: 'handbook.md (Expenses)', text: 'Meals are refunded up to 40 euros a day.', cite: `[1](${link})` }, { n: 2, source: 'faq.md', text: 'Ask HR.', cite: '[2](/knowledge/kb-1/kd-2?passage=0)' }] }) },
      ],
      tools,
    })
    expect(plan.kind).toBe('text')
    const text = (plan as { text: string }).text
    expect(text).toContain('> Meals are refunded up to 40 euros a day.')
    expect(text).toContain(`Source: [1](${link})`)
    expect(text).toContain('faq.md [2](/knowledge/kb-1/kd-2?passage=0)')
    const none = planDemoReply({
      messages: [
        { role: 'user', content: 'parking?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search_knowledge', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ query: 'parking?', searched: ['Handbook'], results: [] }) },
      ],
      tools,
    })
    expect((none as { text: string }).text).toContain('I found nothing about "parking?" in Handbook.')
  })
})
