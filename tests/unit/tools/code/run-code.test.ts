/** run_code: JavaScript in the QuickJS sandbox, its limits ending runaway code with a clear error while the server answers others. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runInSandbox } from '../../../../server/lib/tools/code/quickjs-sandbox'
import { runCodeTool } from '../../../../server/lib/tools/code/run-code-tool'
import { createMemoryWorkspaceStore } from '../../../../server/lib/stores/workspaces/memory'
import { Workspaces } from '../../../../server/lib/tools/workspace/workspaces'
import { findBubblewrap } from '../../../../server/lib/tools/code/bash-sandbox'

const bwrap = findBubblewrap()

const limits = { files: {}, timeoutMs: 1_500, memoryBytes: 16 * 1024 * 1024, outputChars: 2_000 }
let server: Server
let url: string
let port: number
beforeAll(async () => {
  server = createServer((_request, response) => response.end('pong'))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  url = `http://127.0.0.1:${port}/`
})
afterAll(() => server.close())

/** Runs `code` and, while it runs, asks the HTTP server something: it answers before the code ends. */
async function runWhileServing(code: string) {
  let outcomeArrived = false
  const running = runInSandbox({ ...limits, code }).finally(() => (outcomeArrived = true))
  expect(await fetch(url).then(response => response.text())).toBe('pong')
  const answeredFirst = !outcomeArrived
  return { outcome: await running, answeredFirst }
}

describe('the QuickJS sandbox', () => {
  it('runs code: console output, the last value, an awaited promise', async () => {
    expect(await runInSandbox({ ...limits, code: 'console.log("hi", {a: 1}); console.error("careful"); [1, 2, 3].map(n => n * 2)' })).toMatchObject({ ok: true, stdout: 'hi {"a":1}\n', stderr: 'careful\n', result: [2, 4, 6] })
    expect(await runInSandbox({ ...limits, code: '(async () => { const x = await Promise.resolve(20); return x + 1 })()' })).toMatchObject({ ok: true, result: 21 })
    expect(await runInSandbox({ ...limits, code: 'throw new TypeError("bad input")' })).toMatchObject({ ok: false, error: expect.stringMatching(/^TypeError: bad input/) })
  })

  it('has no host: no require, process, fetch or timers', async () => {
    for (const name of ['require', 'process', 'fetch', 'setTimeout']) {
      expect((await runInSandbox({ ...limits, code: `typeof ${name}` })).result).toBe('undefined')
    }
  })

  it('stops an infinite loop at its time limit while the server answers others', async () => {
    const { outcome, answeredFirst } = await runWhileServing('while (true) {}')
    expect(answeredFirst).toBe(true)
    expect(outcome).toMatchObject({ ok: false, error: 'timed out after 1500 ms (stopped)' })
  })

  it('stops a memory bomb with an error', async () => {
    const { outcome, answeredFirst } = await runWhileServing('const b = []; for (;;) b.push(new ArrayBuffer(1024 * 1024))')
    expect(answeredFirst).toBe(true)
    expect(outcome.ok).toBe(false)
    expect(outcome.error).toMatch(/out of memory|timed out/)
    expect((await runInSandbox({ ...limits, code: 'new ArrayBuffer(100 * 1024 * 1024).byteLength' })).error).toBe('out of memory (the sandbox allows 16 MiB)')
  })

  it('ends runaway recursion with a stack overflow', async () => {
    expect(await runInSandbox({ ...limits, code: 'function down(n) { return down(n + 1) + 1 } down(0)' })).toMatchObject({ ok: false, error: expect.stringMatching(/^InternalError: stack overflow/) })
  })

  it('cuts long output and ends code that awaits forever', async () => {
    const loud = await runInSandbox({ ...limits, code: 'for (let i = 0; i < 10000; i++) console.log("line " + i)' })
    expect(loud.stdout.length).toBeLessThan(2_100)
    expect(loud.stdout).toMatch(/output cut at 2000 characters/)
    expect(await runInSandbox({ ...limits, code: 'new Promise(() => {})' })).toMatchObject({ ok: false, error: expect.stringMatching(/never settles/) })
  })
})

describe('run_code', () => {
  it('reads and writes the conversation\'s workspace through the workspace\'s checks', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 100_000, filesPerUser: 10, fileBytes: 1_000 })
    await workspaces.write('thread:t', 'u', 'data/numbers.csv', '3\n4\n5\n')
    const tool = runCodeTool(workspaces, { timeoutMs: 30_000, memoryMb: 16, runsAtOnce: 1, python: false, pythonMemoryMb: 512 })
    const context = { userId: 'u', threadId: 't', jobId: 'j', credentials: { get: () => undefined, has: () => false } }
    const outcome = await tool.handler({ language: 'javascript', code: `
      const numbers = workspace.readFile('data/numbers.csv').trim().split('\\n').map(Number)
      workspace.writeFile('out/sum.txt', String(numbers.reduce((a, b) => a + b, 0)))
      workspace.writeFile('../escape.txt', 'no')
      workspace.writeFile('big.txt', 'x'.repeat(2000))
      workspace.listFiles()` }, context)
    expect(outcome).toMatchObject({
      ok: true,
      result: ['../escape.txt', 'big.txt', 'data/numbers.csv', 'out/sum.txt'],
      filesWritten: ['out/sum.txt'],
      fileProblems: [expect.stringMatching(/^\.\.\/escape\.txt: .*above the workspace/), expect.stringMatching(/^big\.txt: .*at most/)],
    })
    expect((await workspaces.readText('thread:t', 'out/sum.txt')).text).toBe('12')
    expect(tool.definition.capabilities).toEqual(['code_execution', 'workspace'])
  })

  it('runs calls beyond runsAtOnce in turn, and gives up waiting when stopped', async () => {
    const tool = runCodeTool(undefined, { timeoutMs: 1_000, memoryMb: 16, runsAtOnce: 1, python: false, pythonMemoryMb: 512 })
    const context = { userId: 'u', threadId: 't', jobId: 'j', credentials: { get: () => undefined, has: () => false } }
    const first = tool.handler({ language: 'javascript', code: 'while (true) {}' }, context) as Promise<{ error?: string }>
    const stop = new AbortController()
    const second = Promise.resolve(tool.handler({ language: 'javascript', code: '1' }, { ...context, signal: stop.signal }))
    stop.abort()
    await expect(second).rejects.toThrow(/Stopped while waiting/)
    expect((await first).error).toMatch(/timed out/)
    expect(await tool.handler({ language: 'javascript', code: '6 * 7' }, context)).toMatchObject({ ok: true, result: 42 })
  })
})

describe('run_code in Python', () => {
  const context = { userId: 'u', threadId: 't', jobId: 'j', credentials: { get: () => undefined, has: () => false } }
  // Neither test here is about the time limit, so it is long: a busy machine's slow start or slow write must not end them first
  // (a CI run beside other work timed the 150 MB write out at 12 s before it reached the storage limit).
  const python = (workspaces?: Workspaces) => runCodeTool(workspaces, { timeoutMs: 30_000, memoryMb: 16, runsAtOnce: 2, python: true, pythonMemoryMb: 512, pythonStartMs: 30_000 }, bwrap)

  it('is refused saying why where bubblewrap is missing or Python is off', async () => {
    const without = runCodeTool(undefined, { timeoutMs: 1_000, memoryMb: 16, runsAtOnce: 1, python: true, pythonMemoryMb: 512 }, undefined)
    await expect(Promise.resolve().then(() => without.handler({ language: 'python', code: 'print(1)' }, context))).rejects.toThrow(/Python needs bubblewrap \(bwrap\).*apt install bubblewrap/)
    const off = runCodeTool(undefined, { timeoutMs: 1_000, memoryMb: 16, runsAtOnce: 1, python: false, pythonMemoryMb: 512 }, '/usr/bin/bwrap')
    await expect(Promise.resolve().then(() => off.handler({ language: 'python', code: 'print(1)' }, context))).rejects.toThrow(/NUXT_TOOLS_CODE_PYTHON=false/)
    expect(off.definition.function.description).not.toMatch(/Python/)
  })

  // CI installs Debian's bubblewrap (.ci/run).
  it.skipIf(!bwrap)('reads and writes the workspace, and sees none of the server: no environment, no network', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 100_000, filesPerUser: 10, fileBytes: 10_000 })
    await workspaces.write('thread:t', 'u', 'numbers.csv', '3\n4\n5\n')
    process.env.OR3_TEST_SECRET_IN_ENV = 'should-not-leak'
    const outcome = await python(workspaces).handler({ language: 'python', code: [
      'import os, statistics, socket',
      'numbers = [int(line) for line in open("numbers.csv")]',
      'open("mean.txt", "w").write(str(statistics.mean(numbers)))',
      'print("secret" if "OR3_TEST_SECRET_IN_ENV" in os.environ else "clean")',
      'try:',
      `    socket.create_connection(("127.0.0.1", ${port}), timeout=2); print("reached")`,
      'except Exception as error:',
      '    print("no network")',
      '{"sum": sum(numbers)}',
    ].join('\n') }, context)
    delete process.env.OR3_TEST_SECRET_IN_ENV
    expect(outcome).toMatchObject({ ok: true, result: { sum: 12 }, stdout: 'clean\nno network\n', filesWritten: ['mean.txt'] })
    expect((await workspaces.readText('thread:t', 'mean.txt')).text).toBe('4')
  }, 60_000)

  it.skipIf(!bwrap)('stops Python that writes more than the sandbox may store, on the host\'s disk or in /tmp', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e8, filesPerUser: 10, fileBytes: 1e8 })
    const outcome = await python(workspaces).handler({ language: 'python', code: 'open("big.bin", "wb").write(b"0" * 150_000_000)' }, context) as { ok: boolean, error: string }
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/out of room: it wrote more than 50 MiB/) })
    expect(await workspaces.list('thread:t')).toEqual([])
  }, 60_000)

  it.skipIf(!bwrap)('ends an infinite loop, a memory bomb and runaway recursion with clear errors while the server answers others', async () => {
    // The bomb and the recursion end by themselves: their limit is long, so a busy machine's slow start cannot end them first.
    const tool3 = runCodeTool(undefined, { timeoutMs: 60_000, memoryMb: 16, runsAtOnce: 3, python: true, pythonMemoryMb: 512, pythonStartMs: 60_000 }, bwrap)
    // The loop only has to be stopped at its limit, so its limit is short.
    const looping = runCodeTool(undefined, { timeoutMs: 500, memoryMb: 16, runsAtOnce: 1, python: true, pythonMemoryMb: 512, pythonStartMs: 5_000 }, bwrap)
    const running = Promise.all([
      looping.handler({ language: 'python', code: 'while True: pass' }, context),
      tool3.handler({ language: 'python', code: 'x = " " * (2 * 10**9)' }, context),
      tool3.handler({ language: 'python', code: 'def down(n): return down(n + 1)\ndown(0)' }, context),
    ]) as Promise<Array<{ ok: boolean, error: string }>>
    expect(await fetch(url).then(response => response.text())).toBe('pong')
    const [loop, bomb, recursion] = await running
    expect(loop).toMatchObject({ ok: false, error: 'timed out after 6 s (stopped)' })
    expect(bomb).toMatchObject({ ok: false, error: expect.stringMatching(/out of memory|MemoryError/) })
    expect(recursion).toMatchObject({ ok: false, error: expect.stringMatching(/RecursionError/) })
  }, 90_000)
})
