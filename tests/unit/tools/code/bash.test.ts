/** bash: refused unless the operator turned it on and bubblewrap is there; in the sandbox, no network, no host, limits, the workspace kept. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bashTool, bashUnavailable } from '../../../../server/lib/tools/code/bash-tool'
import { findBubblewrap } from '../../../../server/lib/tools/code/bash-sandbox'
import { createMemoryWorkspaceStore } from '../../../../server/lib/stores/workspaces/memory'
import { Workspaces } from '../../../../server/lib/tools/workspace/workspaces'

const bwrap = findBubblewrap()
const context = { userId: 'u', threadId: 't', jobId: 'j', credentials: { get: () => undefined, has: () => false } }
let server: Server
let port: number
beforeAll(async () => {
  server = createServer((_request, response) => response.end('pong'))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => server.close())

describe('bash', () => {
  it('says how to turn it on when it is off, and never runs without bubblewrap', async () => {
    expect(bashUnavailable({ enabled: false, timeoutMs: 1_000, memoryMb: 64 }, '/usr/bin/bwrap')).toMatch(/NUXT_TOOLS_BASH_ENABLED=true/)
    expect(bashUnavailable({ enabled: true, timeoutMs: 1_000, memoryMb: 64 }, undefined)).toMatch(/apt install bubblewrap/)
    const { tool } = bashTool(new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e6, filesPerUser: 10, fileBytes: 1e5 }), { enabled: true, timeoutMs: 1_000, memoryMb: 64 }, undefined)
    await expect(Promise.resolve().then(() => tool.handler({ command: 'echo hi' }, context))).rejects.toThrow(/bubblewrap \(bwrap\) is not installed/)
    expect(findBubblewrap('/nowhere:/also-nowhere')).toBeUndefined()
  })

  // CI installs Debian's bubblewrap (.ci/run); a machine without it runs the test above only.
  it.skipIf(!bwrap)('runs in the sandbox: the workspace is its directory and keeps its changes; no network, no server files, no environment', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e6, filesPerUser: 10, fileBytes: 1e5 })
    await workspaces.write('thread:t', 'u', 'data/in.txt', 'b\na\nc\n')
    await workspaces.write('thread:t', 'u', 'old.txt', 'old')
    process.env.OR3_TEST_SECRET_IN_ENV = 'should-not-leak'
    const { tool } = bashTool(workspaces, { enabled: true, timeoutMs: 10_000, memoryMb: 256 }, bwrap)
    const outcome = await tool.handler({ command: `sort data/in.txt > sorted.txt; rm old.txt; pwd; env | grep -c OR3_TEST || true; ls /home /root /work 2>&1 | head -3; (exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached) 2>&1 | tail -1` }, context) as Record<string, any>
    delete process.env.OR3_TEST_SECRET_IN_ENV
    expect(outcome).toMatchObject({ exitCode: 0, filesWritten: ['sorted.txt'], filesDeleted: ['old.txt'] })
    const lines = (outcome.stdout as string).trim().split('\n')
    expect(lines[0]).toBe('/workspace')
    expect(lines[1]).toBe('0')
    expect(outcome.stdout).toMatch(/No such file or directory/)
    expect(outcome.stdout).not.toMatch(/reached/)
    expect((await workspaces.readText('thread:t', 'sorted.txt')).text).toBe('a\nb\nc\n')
    expect((await workspaces.list('thread:t')).map(file => file.path)).toEqual(['data/in.txt', 'sorted.txt'])
  })

  it.skipIf(!bwrap)('kills a command at its time limit and caps its output', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e6, filesPerUser: 10, fileBytes: 1e5 })
    const { tool } = bashTool(workspaces, { enabled: true, timeoutMs: 1_000, memoryMb: 256 }, bwrap)
    expect(await tool.handler({ command: 'while true; do :; done' }, context)).toMatchObject({ timedOut: true, error: 'stopped after 1 s' })
    // The output cap is not about time: a long limit, so a busy machine's slow sandbox start cannot end it first.
    const { tool: patient } = bashTool(workspaces, { enabled: true, timeoutMs: 30_000, memoryMb: 256 }, bwrap)
    const loud = await patient.handler({ command: 'yes | head -c 100000' }, context) as { stdout: string }
    expect(loud.stdout).toMatch(/cut at 20000 characters/)
  })

  it.skipIf(!bwrap)('counts what it stores: /tmp is a tmpfs inside the memory cap, files past the storage limit stop it', async () => {
    const workspaces = new Workspaces(createMemoryWorkspaceStore(), { bytesPerUser: 1e8, filesPerUser: 10, fileBytes: 1e8 })
    const { tool } = bashTool(workspaces, { enabled: true, timeoutMs: 20_000, memoryMb: 64 }, bwrap)
    // /tmp holds a quarter of the 64 MiB cap: 153 MB no longer fits in RAM beside it.
    const tmp = await tool.handler({ command: 'head -c 160000000 /dev/zero > /tmp/big; echo "exit $?"; df -k /tmp | tail -1' }, context) as Record<string, any>
    expect(tmp.stdout).not.toMatch(/exit 0/)
    expect(tmp.stdout).toMatch(/ 16384 /)
    // One file past 50 MiB is cut by the file-size limit (its writer gets SIGXFSZ), and the run is reported out of room.
    const one = await tool.handler({ command: 'head -c 60000000 /dev/zero > big.bin; ls -l big.bin' }, context) as Record<string, any>
    expect(one.error).toMatch(/wrote more than 50 MiB of files/)
    // Many files under the limit each add up: stopped past 50 MiB in all.
    const many = await tool.handler({ command: 'for i in $(seq 1 40); do head -c 4000000 /dev/zero > part$i.bin; done; sleep 5' }, context) as Record<string, any>
    expect(many.error).toMatch(/wrote more than 50 MiB of files/)
    expect(many.timedOut).toBeUndefined()
    // Cut short, nothing it left is kept.
    expect(await workspaces.list('thread:t')).toEqual([])
  }, 60_000)
})
