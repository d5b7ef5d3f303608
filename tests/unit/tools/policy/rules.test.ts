/** Tool policy evaluation: roles × rules × tools, deny wins, globs and sources, the defaults; the file and the admin's rules. */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { globMatches, policyDenial, type PolicyPrincipal, type PolicyTool, type ToolPolicyRule } from '../../../../server/lib/tools/policy/rules'
import { loadToolPolicyFile, ToolPolicy, ToolPolicyInputError } from '../../../../server/lib/tools/policy/tool-policy'
import { createMemoryAccountBackend } from '../../../../server/lib/stores/accounts/memory'

const admin: PolicyPrincipal = { userId: 'u-admin', role: 'admin', name: 'Root' }
const ada: PolicyPrincipal = { userId: 'u-ada', role: 'user', name: 'Ada' }
const bob: PolicyPrincipal = { userId: 'u-bob', role: 'user', name: 'Bob' }
const guest: PolicyPrincipal = { userId: 'g-1', role: 'guest' }

const calculate: PolicyTool = { name: 'calculate', source: { kind: 'builtin' } }
const convert: PolicyTool = { name: 'convert_units', source: { kind: 'file', name: 'server/tools/convert-units.ts' } }
const webSearch: PolicyTool = { name: 'web_search', source: { kind: 'dynamic', name: 'web.ts' } }
const githubIssues: PolicyTool = { name: 'github__list_issues', source: { kind: 'mcp', name: 'github' } }
const memory: PolicyTool = { name: 'memory__read_graph', source: { kind: 'mcp', name: 'memory' } }

/** Who may use what: a row per principal, in the order of `tools`. */
function table(rules: ToolPolicyRule[]): Record<string, string> {
  const tools = [calculate, convert, webSearch, githubIssues, memory]
  return Object.fromEntries([admin, ada, bob, guest].map(principal => [principal.name ?? 'guest', tools.map(tool => (policyDenial(rules, principal, tool) === undefined ? 'Y' : '-')).join('')]))
}

describe('tool policy rules', () => {
  it('matches globs without backtracking blow-ups', () => {
    expect(globMatches('github__*', 'github__list_issues')).toBe(true)
    expect(globMatches('github__*', 'gitlab__list')).toBe(false)
    expect(globMatches('web_?earch', 'web_search')).toBe(true)
    expect(globMatches('*_search', 'web_search')).toBe(true)
    expect(globMatches('*', '')).toBe(true)
    expect(globMatches('a*b*c', 'aXbYc')).toBe(true)
    expect(globMatches('a*b*c', 'aXbY')).toBe(false)
    // The pattern that makes a backtracking matcher exponential answers at once.
    expect(globMatches('*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(64))).toBe(false)
  })

  it('by default lets admins and users use everything and guests only what is built in', () => {
    expect(table([])).toEqual({ Root: 'YYYYY', Ada: 'YYYYY', Bob: 'YYYYY', guest: 'YY---' })
    expect(policyDenial([], guest, memory)).toMatch(/guests may use only the built-in tools/)
  })

  it('lets deny win over allow, by role, by user (name or id), by glob and by source', () => {
    const rules: ToolPolicyRule[] = [
      { name: 'no MCP for guests', effect: 'deny', tools: ['source:mcp'], roles: ['guest'] },
      { name: 'web for users only', effect: 'deny', tools: ['web_*'], roles: ['guest', 'admin'] },
      { effect: 'allow', tools: ['web_*'], roles: ['guest'] },
      { name: 'no GitHub for Bob', effect: 'deny', tools: ['github__*'], users: ['bob'] },
      { name: 'memory server off for Ada', effect: 'deny', tools: ['source:mcp/memory'], users: ['u-ada'] },
    ]
    expect(table(rules)).toEqual({ Root: 'YY-YY', Ada: 'YYYY-', Bob: 'YYY-Y', guest: 'YY---' })
    expect(policyDenial(rules, bob, githubIssues)).toBe('denied by the tool policy "no GitHub for Bob" for Bob (user)')
    expect(policyDenial(rules, guest, webSearch)).toBe('denied by the tool policy "web for users only" for guests')
  })

  it('lets an allow rule open a tool to guests', () => {
    expect(table([{ effect: 'allow', tools: ['memory__*'], roles: ['guest'] }]).guest).toBe('YY--Y')
    // A rule without roles or users is everyone's.
    expect(table([{ effect: 'deny', tools: ['calculate'] }])).toEqual({ Root: '-YYYY', Ada: '-YYYY', Bob: '-YYYY', guest: '-Y---' })
  })
})

describe('an MCP server for some groups', () => {
  it('is for their members (case aside) and admins only, and a deny rule still wins for them', () => {
    const finance: PolicyTool = { name: 'ledger__balance', source: { kind: 'mcp', name: 'ledger' }, groups: ['Finance'] }
    expect(policyDenial([], { ...ada, groups: ['finance'] }, finance)).toBeUndefined()
    expect(policyDenial([], bob, finance)).toMatch(/for the group Finance; ask an admin to add you/)
    expect(policyDenial([], { ...bob, groups: ['Sales'] }, finance)).toMatch(/group Finance/)
    expect(policyDenial([], admin, finance)).toBeUndefined()
    expect(policyDenial([{ effect: 'deny', tools: ['source:mcp/ledger'], users: ['Ada'] }], { ...ada, groups: ['Finance'] }, finance)).toMatch(/denied by the tool policy/)
  })
})

describe('capabilities in the policy', () => {
  const fetchTool: PolicyTool = { name: 'web_fetch', source: { kind: 'builtin' }, capabilities: ['internet_access'] }
  const runCode: PolicyTool = { name: 'run_code', source: { kind: 'builtin' }, capabilities: ['code_execution', 'workspace'] }
  const read: PolicyTool = { name: 'read', source: { kind: 'builtin' }, capabilities: ['workspace'] }

  it('denies guests built-ins that reach beyond their answer, unless a rule allows them', () => {
    for (const tool of [fetchTool, runCode, read]) expect(policyDenial([], guest, tool)).toMatch(/guests may not use tools with/)
    expect(policyDenial([], guest, calculate)).toBeUndefined()
    expect(policyDenial([], ada, fetchTool)).toBeUndefined()
    const openWorkspace: ToolPolicyRule = { effect: 'allow', tools: ['capability:workspace'], roles: ['guest'] }
    expect(policyDenial([openWorkspace], guest, read)).toBeUndefined()
    expect(policyDenial([openWorkspace], guest, runCode)).toBeUndefined()
    expect(policyDenial([openWorkspace], guest, fetchTool)).toMatch(/internet access/)
  })

  it('lets a capability rule deny every tool with it to a role, whatever its name or source', () => {
    const offline: ToolPolicyRule = { name: 'offline', effect: 'deny', tools: ['capability:internet_access'], roles: ['user'] }
    expect(policyDenial([offline], ada, fetchTool)).toMatch(/offline/)
    expect(policyDenial([offline], ada, { name: 'web_search', source: { kind: 'builtin' }, capabilities: ['internet_access'] })).toMatch(/offline/)
    expect(policyDenial([offline], ada, runCode)).toBeUndefined()
    expect(policyDenial([offline], admin, fetchTool)).toBeUndefined()
  })

  it('refuses a capability it does not know, naming the ones there are', () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-policy-capability-'))
    const file = join(dir, 'policy.json')
    writeFileSync(file, JSON.stringify({ rules: [{ effect: 'deny', tools: ['capability:teleport'] }] }))
    expect(() => loadToolPolicyFile(file)).toThrow(/capability:<internet_access\|workspace\|code_execution\|subagents\|memory\|knowledge\|image_generation>/)
  })
})

describe('the tool policy in force', () => {
  it('reads the file (JSON or YAML), names the rule and field of a problem, and puts the admin\'s rules after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-policy-'))
    writeFileSync(join(dir, 'policy.yaml'), 'rules:\n  - name: no MCP for guests\n    effect: deny\n    tools: ["source:mcp"]\n    roles: [guest]\n')
    const fileRules = loadToolPolicyFile(join(dir, 'policy.yaml'))
    expect(fileRules).toHaveLength(1)
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ rules: [{ effect: 'maybe', tools: ['x'] }, { effect: 'deny', tools: ['bad name!'] }] }))
    expect(() => loadToolPolicyFile(join(dir, 'bad.json'))).toThrow(/rules\.0\.effect[\s\S]*rules\.1\.tools\.0: must be a tool name/)

    const settings = createMemoryAccountBackend()
    let now = 0
    const policy = new ToolPolicy(settings, fileRules, join(dir, 'policy.yaml'), () => now)
    expect((await policy.accessFor(ada))(githubIssues)).toBeUndefined()
    await policy.setAdminRules({ rules: [{ effect: 'deny', tools: ['github__*'], roles: ['user'] }] })
    expect((await policy.accessFor(ada))(githubIssues)).toMatch(/denied by the tool policy/)
    expect(await policy.view()).toMatchObject({ file: join(dir, 'policy.yaml'), fileRules, adminRules: [{ effect: 'deny', tools: ['github__*'], roles: ['user'] }] })
    await expect(policy.setAdminRules({ rules: [{ effect: 'deny', tools: [] }] })).rejects.toBeInstanceOf(ToolPolicyInputError)

    // Another instance's change is read once the cache has aged.
    const other = new ToolPolicy(settings, fileRules, null, () => now)
    await other.setAdminRules({ rules: [] })
    expect((await policy.accessFor(ada))(githubIssues)).toMatch(/denied/)
    now += 6_000
    expect((await policy.accessFor(ada))(githubIssues)).toBeUndefined()

    // A stored value that no longer reads closes MCP and dynamic tools to non-admins rather than opening them.
    await settings.setSetting('tool-policy', '{"rules": "garbled"}')
    now += 6_000
    expect((await policy.accessFor(ada))(githubIssues)).toMatch(/unreadable admin policy/)
    expect((await policy.accessFor(admin))(githubIssues)).toBeUndefined()
  })
})
