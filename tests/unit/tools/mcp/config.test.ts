import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadMcpConfigFile, McpConfigError, parseMcpConfig } from '../../../../server/lib/tools/mcp/config'
import { mcpToolNames } from '../../../../server/lib/tools/mcp/tool-names'
import { McpToolError, mcpResultText } from '../../../../server/lib/tools/mcp/results'

describe('MCP server config', () => {
  it('reads stdio and HTTP servers with their defaults, from JSON or YAML', () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-mcp-config-'))
    writeFileSync(join(dir, 'mcp.yaml'), 'mcpServers:\n  everything:\n    command: npx\n    args: [-y, "@modelcontextprotocol/server-everything"]\n    env: { DEBUG: "1" }\n  remote:\n    type: http\n    url: https://tools.example.com/mcp\n    headers: { Authorization: Bearer abc }\n    timeoutMs: 5000\n    tools: [search]\n')
    expect(loadMcpConfigFile(join(dir, 'mcp.yaml'))).toEqual([
      // A stdio child starts in the file's folder unless it says otherwise.
      { name: 'everything', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1' }, cwd: dir, enabled: true, timeoutMs: 60_000, maxTotalTimeoutMs: 600_000 },
      { name: 'remote', transport: 'http', url: 'https://tools.example.com/mcp', headers: { Authorization: 'Bearer abc' }, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 600_000, tools: ['search'] },
    ])
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { a: { command: 'node', enabled: false } } }))
    expect(loadMcpConfigFile(join(dir, 'mcp.json'))).toMatchObject([{ name: 'a', enabled: false, args: [] }])
  })

  it('names the file, the server and the field of every problem', () => {
    const problems = (raw: unknown) => {
      try {
        parseMcpConfig(raw, 'mcp.json')
      } catch (error) {
        expect(error).toBeInstanceOf(McpConfigError)
        return (error as Error).message
      }
      throw new Error('expected a config error')
    }
    expect(problems({ mcpServers: { x: { command: '' } } })).toMatch(/mcp\.json[\s\S]*server "x"/)
    expect(problems({ mcpServers: { x: { command: 'node', timeoutMs: -1 } } })).toMatch(/server "x"/)
    expect(problems({ mcpServers: { 'bad name!': { command: 'node' } } })).toMatch(/server names are 1-32 letters/)
    expect(problems({ mcpServers: { x: { url: 'ftp://example.com' } } })).toMatch(/server "x"/)
    expect(problems({ mcpServers: { x: { command: 'node', url: 'http://a' } } })).toMatch(/either "command"/)
    expect(problems({ servers: {} })).toMatch(/servers/)
    // A field of the wrong type is named with the type it takes, not "must have either command or url".
    const wrongTypes = problems({ mcpServers: { x: { command: 'node', args: 'server.js', timeoutMs: '5000' }, y: { url: 'https://a.example/mcp', headers: ['Authorization: x'] } } })
    expect(wrongTypes).toMatch(/server "x", field "args": .*expected array, received string/)
    expect(wrongTypes).toMatch(/server "x", field "timeoutMs": .*expected number, received string/)
    expect(wrongTypes).toMatch(/server "y", field "headers": .*expected record, received array/)
    expect(wrongTypes).not.toMatch(/either "command"/)
    expect(problems({ mcpServers: { x: { command: 'node', unknownField: 1 } } })).toMatch(/server "x".*unknownField/)
    // Each person's OAuth token is the Authorization: a fixed one beside it would be a mistake.
    expect(problems({ mcpServers: { x: { url: 'https://a.example/mcp', oauth: true, headers: { authorization: 'Bearer x' } } } })).toMatch(/server "x"[\s\S]*must not set Authorization on a server that uses "oauth"/)
    expect(parseMcpConfig({ mcpServers: { x: { url: 'https://a.example/mcp', oauth: { scope: 'repo read' } } } }, 'mcp.json')).toMatchObject([{ name: 'x', transport: 'http', oauth: { scope: 'repo read' } }])
    const dir = mkdtempSync(join(tmpdir(), 'or3-mcp-config-'))
    writeFileSync(join(dir, 'broken.json'), '{ not json')
    expect(() => loadMcpConfigFile(join(dir, 'broken.json'))).toThrow(/broken\.json is not valid JSON/)
    expect(() => loadMcpConfigFile(join(dir, 'missing.yaml'))).toThrow(/Cannot read the MCP server config .*missing\.yaml/)
  })
})

describe('paths in a stdio server of the config file', () => {
  it('are relative to the file\'s folder, wherever the app was started from', () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-mcp-paths-'))
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: {
      local: { command: 'node', args: ['./servers/fs.js', '../shared/x.js', '-y', '@scope/pkg', 'stdio'] },
      script: { command: 'bin/server', cwd: 'work' },
      absolute: { command: '/usr/bin/node', cwd: '/srv', args: ['/opt/s.js'] },
      remote: { url: 'https://a.example/mcp' },
    } }))
    const [local, script, absolute, remote] = loadMcpConfigFile(join(dir, 'mcp.json'))
    expect(local).toMatchObject({ command: 'node', cwd: dir, args: [join(dir, 'servers/fs.js'), join(dir, '../shared/x.js'), '-y', '@scope/pkg', 'stdio'] })
    expect(script).toMatchObject({ command: join(dir, 'bin/server'), cwd: join(dir, 'work') })
    expect(absolute).toMatchObject({ command: '/usr/bin/node', cwd: '/srv', args: ['/opt/s.js'] })
    expect(remote).not.toHaveProperty('cwd')
  })
})

describe('MCP tool names', () => {
  it('follows the function-name rules, and settles collisions and long names the same way whatever the order', () => {
    expect(mcpToolNames('fs', ['read_file', 'list.dir'])).toEqual(['fs__read_file', 'fs__list_dir'])
    const names = mcpToolNames('fs', ['a.b', 'a_b', 'x'.repeat(80)])
    expect(names.every(name => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true)
    expect(new Set(names).size).toBe(3)
    expect(names[1]).toBe('fs__a_b')
    expect(mcpToolNames('fs', ['x'.repeat(80), 'a_b', 'a.b'])).toEqual([names[2], names[1], names[0]])
  })
})

describe('MCP results', () => {
  it('keeps text and text resources, adds structured content once, describes binary content, and cuts to the limit', () => {
    expect(mcpResultText({ content: [{ type: 'text', text: 'hello' }, { type: 'resource', resource: { uri: 'file:///a.txt', text: 'body' } }] }, 1_000)).toBe('hello\n\n[resource file:///a.txt]\nbody')
    expect(mcpResultText({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } }, 1_000)).toBe('{"a":1}')
    expect(mcpResultText({ content: [], structuredContent: { a: 1 } }, 1_000)).toBe('{"a":1}')
    expect(mcpResultText({ content: [{ type: 'audio', mimeType: 'audio/wav', data: 'AAAA' }] }, 1_000)).toBe('[audio audio/wav, 3 bytes, not shown to the model]')
    const cut = mcpResultText({ content: [{ type: 'text', text: 'é'.repeat(1_000) }] }, 300)
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(300)
    expect(cut).toMatch(/\[cut: the tool returned 2,000 bytes of text; the first part is shown\]$/)
  })

  it('turns an isError result into a tool error with its text', () => {
    expect(() => mcpResultText({ isError: true, content: [{ type: 'text', text: 'no such file' }] }, 1_000)).toThrow(McpToolError)
    expect(() => mcpResultText({ isError: true }, 1_000)).toThrow(/without a message/)
  })
})
