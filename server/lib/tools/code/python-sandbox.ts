/**
 * Python for `run_code`: CPython compiled to WebAssembly (the npm `pyodide` package, offline,
 * pure-Python standard library), run by this server's Node binary inside the bubblewrap sandbox
 * of bash-sandbox.ts. Not in a worker of the server's own: Pyodide's bridge to JavaScript gives
 * Python code the JavaScript realm it runs in (and from there Node's modules), so only an
 * operating-system boundary keeps it from the server; in the sandbox that realm can reach nothing
 * but the read-only system, its own /tmp and the workspace, with no network.
 */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { runInShellSandbox, type ShellOutcome } from './bash-sandbox'

/** Marks the line that carries the value of the code's last expression, as JSON. */
const RESULT_MARK = '\u001for3-result:'

/** The runner, given to `node -e`: loads Pyodide from its read-only copy, runs stdin's code in /workspace. */
const RUNNER = String.raw`
import { readFileSync } from 'node:fs'
import { loadPyodide } from '/opt/or3/pyodide/pyodide.mjs'
const code = readFileSync(0, 'utf8')
const py = await loadPyodide({ indexURL: '/opt/or3/pyodide/', stdout: line => process.stdout.write(line + '\n'), stderr: line => process.stderr.write(line + '\n') })
py.FS.mkdirTree('/workspace')
py.FS.mount(py.FS.filesystems.NODEFS, { root: '/workspace' }, '/workspace')
py.runPython('import os; os.chdir("/workspace")')
try {
  let result = await py.runPythonAsync(code)
  if (result && typeof result.toJs === 'function') result = result.toJs({ dict_converter: Object.fromEntries })
  let json
  try { json = JSON.stringify(result) } catch { json = JSON.stringify(String(result)) }
  if (json !== undefined) process.stdout.write('\u001for3-result:' + json + '\n')
} catch (error) {
  process.stderr.write(String(error && error.message || error).split('\n').slice(-12).join('\n'))
  process.exitCode = 1
}
`

let pyodideDir: string | undefined
/** Where the pyodide package is (resolved at the first run; see quickjs-sandbox.ts for why not at load). */
function pyodidePackageDir(): string {
  return pyodideDir ??= dirname(createRequire(import.meta.url).resolve('pyodide/pyodide.mjs'))
}

export interface PythonOutcome extends ShellOutcome {
  /** The value of the code's last expression, when it had one JSON can carry. */
  result?: unknown
}

/** Runs Python `code` with the workspace's `files` in the sandbox (bwrap at `bwrap`). */
export async function runPython(bwrap: string, run: { code: string, files: Record<string, Uint8Array>, timeoutMs: number, memoryMb: number, outputChars: number }, signal?: AbortSignal): Promise<PythonOutcome> {
  const outcome = await runInShellSandbox(bwrap, {
    command: run.code,
    files: run.files,
    timeoutMs: run.timeoutMs,
    memoryMb: run.memoryMb,
    outputChars: run.outputChars,
    program: {
      argv: ['/opt/or3/node', '--max-old-space-size=256', '--input-type=module', '-e', RUNNER],
      mounts: [{ from: process.execPath, to: '/opt/or3/node' }, { from: pyodidePackageDir(), to: '/opt/or3/pyodide' }],
    },
  }, signal)
  const at = outcome.stdout.lastIndexOf(RESULT_MARK)
  if (at === -1) return outcome
  const line = outcome.stdout.slice(at + RESULT_MARK.length).split('\n')[0]!
  let result: unknown
  try {
    result = JSON.parse(line)
  } catch {
    result = undefined
  }
  return { ...outcome, stdout: outcome.stdout.slice(0, at), ...(result !== undefined && result !== null ? { result } : {}) }
}
