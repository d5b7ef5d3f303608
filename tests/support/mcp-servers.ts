/**
 * Real MCP servers from npm for the tests (devDependencies: nothing is downloaded at test time):
 * `@modelcontextprotocol/server-everything` over stdio or over Streamable HTTP on a free port, and
 * `@modelcontextprotocol/server-memory`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './free-port'

const require = createRequire(import.meta.url)

/** The entry script of server-everything. */
export const EVERYTHING_ENTRY = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js')

/** The entry script of server-memory (a knowledge graph kept in the file MEMORY_FILE_PATH names). */
export const MEMORY_ENTRY = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js')

/** The tests' MCP App server (tests/fixtures/mcp/app-server.mjs: a counter page and its tools) over stdio, as an MCP config entry. */
export function counterAppOverStdio(name = 'apps') {
  return { name, transport: 'stdio' as const, command: process.execPath, args: [fileURLToPath(new URL('../fixtures/mcp/app-server.mjs', import.meta.url))], env: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 30_000 }
}

/** server-everything over stdio, as an MCP config entry. */
export function everythingOverStdio(name = 'everything') {
  return { name, transport: 'stdio' as const, command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], env: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 30_000 }
}

/**
 * server-everything over Streamable HTTP on a free port: `stop` kills it, `start` starts a fresh
 * one on the same port, `restart` both; `pid` is the running one's process id.
 */
export async function startEverythingOverHttp(): Promise<{ url: string, start: () => Promise<void>, restart: () => Promise<void>, stop: () => Promise<void>, pid: () => number }> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
    await new Promise<void>((resolve, reject) => {
      let output = ''
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (/listening/i.test(output)) resolve()
      }
      child!.stdout!.on('data', onData)
      child!.stderr!.on('data', onData)
      child!.once('exit', code => reject(new Error(`server-everything exited (${code}): ${output}`)))
    })
  }
  const stop = async () => {
    // A killed child has a signalCode, not an exitCode.
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise(resolve => child!.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
  await start()
  return { url: `http://127.0.0.1:${port}/mcp`, start, restart: async () => {
    await stop()
    await start()
  }, stop, pid: () => child!.pid! }
}
