import { describe, expect, it } from 'vitest'
import { answerFindTools, rankTools, selectOfferedTools } from '../../../server/lib/agent/tool-selection'
import type { OpenRouterToolDefinition } from '../../../server/lib/openrouter/types'

const tool = (name: string, description: string): OpenRouterToolDefinition => ({ type: 'function', function: { name, description, parameters: { type: 'object', properties: {} } } })
const tools = [tool('read_file', 'Reads a file from disk.'), tool('send_email', 'Sends an email message.'), tool('currency_convert', 'Converts an amount between currencies.')]

describe('tool selection', () => {
  it('offers everything up to the limit, and past it the relevant ones, the found ones and find_tools', () => {
    expect(selectOfferedTools(tools, { maxOffered: 3, context: '', found: new Set() })).toEqual(tools)
    const offered = selectOfferedTools(tools, { maxOffered: 2, context: 'Please send an email to Bob', found: new Set() })
    expect(offered.map(item => item.function.name)).toEqual(['send_email', 'find_tools'])
    expect(selectOfferedTools(tools, { maxOffered: 2, context: 'send an email', found: new Set(['read_file']) }).map(item => item.function.name)).toEqual(['read_file', 'find_tools'])
  })

  it('ranks names above descriptions and ignores common words', () => {
    expect(rankTools(tools, 'the file').map(({ tool: item }) => item.function.name)[0]).toBe('read_file')
    expect(rankTools(tools, 'the and what').every(({ score }) => score === 0)).toBe(true)
  })

  it('answers find_tools with matches it remembers, and says what to fix for bad arguments', () => {
    const found = new Set<string>()
    expect(JSON.parse(answerFindTools(tools, '{"query":"convert currencies"}', found))).toMatchObject({ found: [{ name: 'currency_convert' }] })
    expect(found).toEqual(new Set(['currency_convert']))
    expect(JSON.parse(answerFindTools(tools, '{"query":"weather"}', found))).toMatchObject({ found: [], note: expect.stringMatching(/other words/) })
    expect(() => answerFindTools(tools, '{', found)).toThrow(/JSON/)
    expect(() => answerFindTools(tools, '{"query":""}', found)).toThrow(/query/)
    // A huge query costs no more than its first 2,000 characters.
    expect(JSON.parse(answerFindTools(tools, JSON.stringify({ query: `${'x '.repeat(500_000)}email` }), new Set())).found).toEqual([])
  })
})
