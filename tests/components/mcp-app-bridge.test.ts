/** The host side of the MCP Apps bridge: what a page's messages are taken as (strictly), and what it is told. */
import { describe, expect, it } from 'vitest'
import { bridgeMessageOf, messageTextOf, openableLink, toolResultFor } from '../../app/utils/mcp-app-bridge'

describe('the MCP Apps bridge', () => {
  it('takes JSON-RPC requests and notifications of sensible size, and nothing else', () => {
    expect(bridgeMessageOf({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } })).toEqual({ kind: 'request', id: 1, method: 'tools/call', params: { name: 'x' } })
    expect(bridgeMessageOf({ jsonrpc: '2.0', method: 'ui/notifications/initialized' })).toEqual({ kind: 'notification', method: 'ui/notifications/initialized', params: {} })
    for (const junk of [null, 'text', { jsonrpc: '1.0', method: 'x' }, { jsonrpc: '2.0', method: 'x'.repeat(101) }, { jsonrpc: '2.0', id: { nested: true }, method: 'ping' }, { jsonrpc: '2.0', id: 'i'.repeat(101), method: 'ping' }]) {
      expect(bridgeMessageOf(junk)).toBeUndefined()
    }
    expect(bridgeMessageOf({ jsonrpc: '2.0', id: 2, method: 'ping', params: [1, 2] })).toMatchObject({ params: {} })
  })

  it('opens only http(s) links, and takes a message\'s text blocks', () => {
    expect(openableLink('https://example.org/a?b=1')).toBe('https://example.org/a?b=1')
    for (const bad of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'not a url', 42]) expect(openableLink(bad)).toBeUndefined()
    expect(messageTextOf({ content: { type: 'text', text: ' hello ' } })).toBe('hello')
    expect(messageTextOf({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: 'x' }, { type: 'text', text: 'b' }] })).toBe('a\nb')
    expect(messageTextOf({ content: { type: 'image' } })).toBeUndefined()
    expect(messageTextOf({ content: { type: 'text', text: 'x'.repeat(20_000) } })).toHaveLength(10_000)
  })

  it('tells the page the call\'s result, its structured content when it is a JSON object, or its error', () => {
    expect(toolResultFor('{"count":3}', undefined)).toEqual({ content: [{ type: 'text', text: '{"count":3}' }], structuredContent: { count: 3 } })
    expect(toolResultFor('plain words', undefined)).toEqual({ content: [{ type: 'text', text: 'plain words' }] })
    expect(toolResultFor('[1,2]', undefined)).toEqual({ content: [{ type: 'text', text: '[1,2]' }] })
    expect(toolResultFor(undefined, 'it broke')).toEqual({ content: [{ type: 'text', text: 'it broke' }], isError: true })
  })
})
