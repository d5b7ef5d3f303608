/**
 * `run_code`: JavaScript run in the QuickJS sandbox (quickjs-sandbox.ts) with the calling
 * conversation's workspace: its text files (up to `LOADED_BYTES` together) readable through
 * `workspace.readFile(path)`, and the files the code writes or deletes applied afterwards through
 * the workspace's own checks (paths, sizes, quota). At most `runsAtOnce` sandboxes run at once on
 * this instance; more calls wait their turn (and give up when their call is stopped).
 *
 * Not idempotent: code may write files. A crash while it ran leaves the workspace as before it
 * (its writes are applied only after it finished) unless the crash fell between two of those
 * writes; the model is told the outcome is unknown and can look.
 */
import { z } from 'zod'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import { isText, workspaceIdFor, type Workspaces } from '../workspace/workspaces'
import { runInSandbox } from './quickjs-sandbox'

export interface RunCodeSettings {
  timeoutMs: number
  memoryMb: number
  runsAtOnce: number
}

/** Bytes of workspace text handed to one run at most. */
const LOADED_BYTES = 8 * 1024 * 1024
const OUTPUT_CHARS = 20_000
const MAX_CODE_CHARS = 100_000

/** At most `limit` at once; the rest wait in order. */
class Turns {
  private running = 0
  private readonly waiting: Array<() => void> = []
  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', stop)
          resolve()
        }
        const stop = () => {
          this.waiting.splice(this.waiting.indexOf(go), 1)
          reject(new Error('Stopped while waiting for a free sandbox.'))
        }
        this.waiting.push(go)
        signal?.addEventListener('abort', stop, { once: true })
      })
    }
    this.running++
    try {
      return await work()
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }
}

export function runCodeTool(workspaces: Workspaces | undefined, settings: RunCodeSettings): ServerToolModule {
  const turns = new Turns(settings.runsAtOnce)
  return defineServerTool({
    name: 'run_code',
    description: 'Run JavaScript in a sandbox (QuickJS: no network, no timers, no modules). console.log prints; the last expression\'s value (or an awaited promise\'s) is returned. '
      + (workspaces ? 'The workspace is available as workspace.readFile(path), workspace.writeFile(path, text), workspace.deleteFile(path) and workspace.listFiles(). ' : '')
      + `Limits: ${Math.round(settings.timeoutMs / 1000)} s and ${settings.memoryMb} MiB.`,
    parameters: z.object({
      language: z.enum(['javascript']).default('javascript').describe('The language; only javascript is available.'),
      code: z.string().min(1).max(MAX_CODE_CHARS).describe('The program.'),
    }),
    runtime: 'server',
    capabilities: workspaces ? ['code_execution', 'workspace'] : ['code_execution'],
    // The sandbox has its own deadline; the call's limit leaves room for loading and writing files.
    timeoutMs: settings.timeoutMs + 20_000,
    handler: async ({ code }, context) => {
      const workspaceId = workspaceIdFor(context)
      const files: Record<string, string> = {}
      if (workspaces) {
        let loaded = 0
        for (const info of await workspaces.list(workspaceId)) {
          if (loaded + info.size > LOADED_BYTES) continue
          const { bytes } = await workspaces.read(workspaceId, info.path)
          if (!isText(bytes)) continue
          files[info.path] = new TextDecoder().decode(bytes)
          loaded += info.size
        }
      }
      const outcome = await turns.run(() => runInSandbox({ code, files, timeoutMs: settings.timeoutMs, memoryBytes: settings.memoryMb * 1024 * 1024, outputChars: OUTPUT_CHARS }, context.signal), context.signal)
      const written: string[] = []
      const problems: string[] = []
      if (workspaces) {
        for (const [path, text] of Object.entries(outcome.writes)) {
          try {
            written.push((await workspaces.write(workspaceId, context.userId, path, text)).path)
          } catch (error) {
            problems.push(`${path}: ${(error as Error).message}`)
          }
        }
        for (const path of outcome.deletes) {
          await workspaces.delete(workspaceId, path).catch((error: Error) => problems.push(`${path}: ${error.message}`))
        }
      }
      return {
        ok: outcome.ok,
        ...(outcome.stdout ? { stdout: outcome.stdout } : {}),
        ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
        ...(outcome.result !== undefined ? { result: outcome.result } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(written.length > 0 ? { filesWritten: written } : {}),
        ...(outcome.deletes.length > 0 ? { filesDeleted: outcome.deletes.filter(path => !problems.some(problem => problem.startsWith(`${path}:`))) } : {}),
        ...(problems.length > 0 ? { fileProblems: problems } : {}),
      }
    },
  })
}
