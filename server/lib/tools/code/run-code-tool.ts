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
import { changesReport, isText, workspaceIdFor, type Workspaces } from '../workspace/workspaces'
import { runInSandbox } from './quickjs-sandbox'
import { runPython } from './python-sandbox'
import { STORAGE_BYTES } from './bash-sandbox'
import type { ToolExecutionContext } from '../tool-types'

export interface RunCodeSettings {
  timeoutMs: number
  memoryMb: number
  runsAtOnce: number
  python: boolean
  pythonMemoryMb: number
  /** Time Python gets on top of `timeoutMs` to load (default `PYTHON_START_MS`). */
  pythonStartMs?: number
}

/** Time Python gets on top of the limit, to load (Pyodide starts in 2-3 s, longer on a busy machine). */
const PYTHON_START_MS = 15_000

/** Bytes of workspace text handed to one run at most. */
const LOADED_BYTES = 8 * 1024 * 1024
const OUTPUT_CHARS = 20_000
const MAX_CODE_CHARS = 100_000

const NOTHING_APPLIED = { written: [], deleted: [], problems: [] }

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

/** Why Python cannot run here, or undefined. */
export function pythonUnavailable(settings: Pick<RunCodeSettings, 'python'>, bwrap: string | undefined): string | undefined {
  if (!settings.python) return 'Python is off on this server (NUXT_TOOLS_CODE_PYTHON=false); use javascript.'
  if (!bwrap) return 'Python needs bubblewrap (bwrap), which this server does not have: the operator installs it (apt install bubblewrap) and restarts. Use javascript meanwhile.'
  return undefined
}

export function runCodeTool(workspaces: Workspaces | undefined, settings: RunCodeSettings, bwrap?: string): ServerToolModule {
  const turns = new Turns(settings.runsAtOnce)
  const python = pythonUnavailable(settings, bwrap) === undefined
  return defineServerTool({
    name: 'run_code',
    description: `Run ${python ? 'JavaScript or Python' : 'JavaScript'} in a sandbox with no network. JavaScript (QuickJS: no timers, no modules): console.log prints; the last expression's value (or an awaited promise's) is returned. `
      + (workspaces ? 'The workspace is available as workspace.readFile(path), workspace.writeFile(path, text), workspace.deleteFile(path) and workspace.listFiles(). ' : '')
      + (python ? `Python (Pyodide, the standard library only): print() prints, the last expression's value is returned${workspaces ? ', and the workspace is the working directory (open() reads and writes its files)' : ''}. ` : '')
      + `Limits: ${Math.round(settings.timeoutMs / 1000)} s and ${settings.memoryMb} MiB${python ? ` (Python: ${settings.pythonMemoryMb} MiB, plus a few seconds to start)` : ''}.`,
    parameters: z.object({
      language: z.enum(['javascript', 'python']).default('javascript').describe(python ? 'javascript or python.' : 'Only javascript is available here.'),
      code: z.string().min(1).max(MAX_CODE_CHARS).describe('The program.'),
    }),
    runtime: 'server',
    capabilities: workspaces ? ['code_execution', 'workspace'] : ['code_execution'],
    // The sandbox has its own deadline; the call's limit leaves room for loading and writing files.
    timeoutMs: settings.timeoutMs + (settings.pythonStartMs ?? PYTHON_START_MS) + 20_000,
    handler: async ({ code, language }, context) => {
      const workspaceId = workspaceIdFor(context)
      if (language === 'python') return runPythonCall(code, workspaces, workspaceId, context, settings, bwrap, turns)
      const files: Record<string, string> = {}
      if (workspaces) {
        for (const [path, bytes] of Object.entries((await workspaces.snapshot(workspaceId, LOADED_BYTES)).files)) {
          if (isText(bytes)) files[path] = new TextDecoder().decode(bytes)
        }
      }
      const outcome = await turns.run(() => runInSandbox({ code, files, timeoutMs: settings.timeoutMs, memoryBytes: settings.memoryMb * 1024 * 1024, outputChars: OUTPUT_CHARS }, context.signal), context.signal)
      const applied = workspaces ? await workspaces.applyChanges(workspaceId, context.userId, outcome) : NOTHING_APPLIED
      return {
        ok: outcome.ok,
        ...(outcome.stdout ? { stdout: outcome.stdout } : {}),
        ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
        ...(outcome.result !== undefined ? { result: outcome.result } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        ...changesReport(applied),
      }
    },
  })
}

/** A Python call: the workspace's files copied into the sandbox, its changes written back through the workspace's checks. */
async function runPythonCall(code: string, workspaces: Workspaces | undefined, workspaceId: string, context: ToolExecutionContext, settings: RunCodeSettings, bwrap: string | undefined, turns: Turns): Promise<Record<string, unknown>> {
  const reason = pythonUnavailable(settings, bwrap)
  if (reason) throw new Error(reason)
  const { files } = workspaces ? await workspaces.snapshot(workspaceId, LOADED_BYTES) : { files: {} }
  const limitMs = settings.timeoutMs + (settings.pythonStartMs ?? PYTHON_START_MS)
  const outcome = await turns.run(() => runPython(bwrap!, { code, files, timeoutMs: limitMs, memoryMb: settings.pythonMemoryMb, outputChars: OUTPUT_CHARS }, context.signal), context.signal)
  const applied = workspaces ? await workspaces.applyChanges(workspaceId, context.userId, outcome) : NOTHING_APPLIED
  const error = outcome.timedOut ? `timed out after ${Math.round(limitMs / 1000)} s (stopped)` : outcome.outOfMemory ? `out of memory (Python may hold ${settings.pythonMemoryMb} MiB)` : outcome.outOfStorage ? `out of room: it wrote more than ${STORAGE_BYTES / 1024 / 1024} MiB of files (or one that large), and was stopped` : outcome.exitCode !== 0 ? (outcome.stderr.trim().split('\n').at(-1) ?? 'it failed') : undefined
  return {
    ok: error === undefined,
    ...(outcome.stdout ? { stdout: outcome.stdout } : {}),
    ...(outcome.stderr ? { stderr: outcome.stderr } : {}),
    ...(outcome.result !== undefined ? { result: outcome.result } : {}),
    ...(error ? { error } : {}),
    ...changesReport(applied),
  }
}
