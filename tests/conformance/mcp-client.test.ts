/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned), client side:
 * for each of its client scenarios it starts the scenario's server (an MCP server, an
 * authorization server laid out as that scenario says) and runs tests/conformance/app-client.ts,
 * which connects with the app's own MCP client, OAuth flows included. The suite judges what its
 * servers saw. One scenario at a time, so the one that measures reconnect timing (sse-retry) is
 * not judged on a machine busy with the others.
 *
 * Every scenario passes except those that do not apply to this app, each named with its reason in
 * NOT_APPLICABLE and in the README's MCP section.
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const root = fileURLToPath(new URL('../../', import.meta.url))
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js')
const node20Hooks = join(root, 'tests/conformance/node20-hooks.mjs')
const jiti = join(dirname(require.resolve('jiti/package.json')), 'lib', 'jiti-cli.mjs')
const client = `"${process.execPath}" "${jiti}" "${join(root, 'tests/conformance/app-client.ts')}"`

/** Scenarios that test something this app does not do, and why (the README says the same). */
const NOT_APPLICABLE: Record<string, string> = {
  'auth/cross-app-access-complete-flow': 'enterprise-managed authorization (SEP-990) exchanges the person\'s ID token from the company\'s identity provider; people sign in to this app with its own accounts, so there is no such token',
}

/** Warnings the suite itself calls acceptable: a reconnect a little after the server's `retry` time. */
const ACCEPTABLE_WARNINGS = new Set(['client-sse-retry-timing'])

function conformance(args: string[], timeoutMs: number): Promise<{ code: number, output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', node20Hooks, suite, ...args], { cwd: root, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}\n${stderr}` })
    })
  })
}

/** The suite's client scenarios (`conformance list --client`), read when the file is collected. */
const scenarios = execFileSync(process.execPath, ['--import', node20Hooks, suite, 'list', '--client'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .flatMap(line => /^\s+- (\S+)/.exec(line)?.[1] ?? [])

interface Check { id: string, status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED', description?: string, errorMessage?: string }

/** Every checks.json under `dir` (the suite nests them by scenario name and time). */
function readChecks(dir: string): Check[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(path => path.endsWith('checks.json'))
    .flatMap(path => JSON.parse(readFileSync(join(dir, path), 'utf8')) as Check[])
}

const outputs = mkdtempSync(join(tmpdir(), 'or3-mcp-conformance-'))
afterAll(() => rmSync(outputs, { recursive: true, force: true }))

describe('the official MCP conformance suite, client scenarios', () => {
  it('lists the scenarios this app is checked against', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(26)
    for (const name of Object.keys(NOT_APPLICABLE)) expect(scenarios).toContain(name)
  })

  it('names every scenario that does not apply in the tools page (docs/tools.md), with its reason', () => {
    const readme = readFileSync(join(root, 'docs/tools.md'), 'utf8')
    for (const name of Object.keys(NOT_APPLICABLE)) expect(readme).toContain(`\`${name}\``)
  })

  for (const scenario of scenarios) {
    it.skipIf(scenario in NOT_APPLICABLE)(scenario, async () => {
      const dir = mkdtempSync(join(outputs, 'scenario-'))
      const run = await conformance(['client', '--command', client, '--scenario', scenario, '--timeout', '90000', '-o', dir], 150_000)
      const checks = readChecks(dir)
      const problems = checks.filter(check => check.status === 'FAILURE' || (check.status === 'WARNING' && !ACCEPTABLE_WARNINGS.has(check.id)))
      expect(problems, run.output.slice(-6_000)).toEqual([])
      expect(checks.some(check => check.status === 'SUCCESS'), run.output.slice(-6_000)).toBe(true)
    }, 180_000)
  }
})
