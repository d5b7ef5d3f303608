/**
 * JavaScript run in QuickJS compiled to WebAssembly (`quickjs-emscripten-core` with the release
 * build of `@jitl/quickjs-wasmfile-release-sync`), in a worker thread of its own: the code sees no
 * `require`, no `process`, no file system and no network, only what is given to it: `console`,
 * and a `workspace` object reading the files handed in and recording the files it writes, which
 * the caller then writes through the workspace's own checks. Its memory is capped inside QuickJS
 * (and the worker's heap by `resourceLimits`), its time by QuickJS's interrupt handler, and the
 * worker is terminated a second after the deadline whatever the code does, so an infinite loop,
 * a memory bomb or deep recursion ends with a clear error while the server answers everyone else.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

export interface SandboxRun {
  code: string
  /** Text files the code may read, by workspace path. */
  files: Record<string, string>
  timeoutMs: number
  memoryBytes: number
  /** Characters of stdout and of stderr kept (the rest is cut, saying so). */
  outputChars: number
  /** JSON values set as globals before the code runs (a tool's `args`). */
  globals?: Record<string, unknown>
  /** Credentials the code may read with `credentials.get(service, key)`: only the services given. */
  credentials?: Record<string, Record<string, string>>
  /**
   * Lets the code call `fetch(url)` (synchronous inside the sandbox: it returns `{ status,
   * contentType, text }` or throws), answered by this function on the server's side, at most
   * `MAX_FETCHES` times a run. Absent: no `fetch` in the sandbox.
   */
  fetch?: (url: string) => Promise<SandboxFetchAnswer>
}

/** What a sandbox's `fetch` gets back. */
export interface SandboxFetchAnswer {
  status: number
  contentType: string
  text: string
}

/** Fetches one run may make. */
export const MAX_FETCHES = 10
/** Bytes of one fetch's answer handed into the sandbox (its text is cut to fit). */
const FETCH_ANSWER_BYTES = 2 * 1024 * 1024

export interface SandboxOutcome {
  ok: boolean
  stdout: string
  stderr: string
  /** The value of the last expression (or the resolved promise), as JSON when it is JSON-able. */
  result?: unknown
  /** Why it failed: the exception, "timed out", "out of memory". */
  error?: string
  /** Files the code wrote, by the path it gave. */
  writes: Record<string, string>
  /** Files the code deleted. */
  deletes: string[]
}

/** What the worker runs (CommonJS; the package paths come in `workerData`). */
const SANDBOX_WORKER = String.raw`
const { parentPort, workerData } = require('node:worker_threads')
const { newQuickJSWASMModuleFromVariant } = require(workerData.core)
const variantModule = require(workerData.variant)
const { code, files, timeoutMs, memoryBytes, outputChars, globals, credentials } = workerData.run
const bridge = workerData.bridge
const output = { stdout: '', stderr: '' }
const cut = { stdout: false, stderr: false }
function write(stream, text) {
  if (cut[stream]) return
  const room = outputChars - output[stream].length
  if (text.length > room) {
    output[stream] += text.slice(0, room)
    cut[stream] = true
  } else output[stream] += text
}
const writes = {}
const deletes = []
const norm = path => String(path).replace(/\\/g, '/').replace(/^(\.?\/)+/, '')
;(async () => {
  const QuickJS = await newQuickJSWASMModuleFromVariant(variantModule.default || variantModule)
  const runtime = QuickJS.newRuntime()
  runtime.setMemoryLimit(memoryBytes)
  runtime.setMaxStackSize(512 * 1024)
  const deadline = Date.now() + timeoutMs
  runtime.setInterruptHandler(() => Date.now() > deadline)
  const vm = runtime.newContext()
  const show = (handle) => {
    const value = vm.dump(handle)
    return typeof value === 'string' ? value : JSON.stringify(value)
  }
  const consoleObject = vm.newObject()
  for (const [name, stream] of [['log', 'stdout'], ['info', 'stdout'], ['debug', 'stdout'], ['warn', 'stderr'], ['error', 'stderr']]) {
    const fn = vm.newFunction(name, (...args) => { write(stream, args.map(show).join(' ') + '\n') })
    vm.setProp(consoleObject, name, fn)
    fn.dispose()
  }
  vm.setProp(vm.global, 'console', consoleObject)
  consoleObject.dispose()
  const workspace = vm.newObject()
  const readFile = vm.newFunction('readFile', (pathHandle) => {
    const path = norm(vm.getString(pathHandle))
    if (Object.prototype.hasOwnProperty.call(writes, path)) return vm.newString(writes[path])
    if (!Object.prototype.hasOwnProperty.call(files, path) || deletes.includes(path)) return { error: vm.newError('No file ' + path + ' in the workspace (or it is not text, or too large to load)') }
    return vm.newString(files[path])
  })
  const writeFile = vm.newFunction('writeFile', (pathHandle, textHandle) => {
    const path = norm(vm.getString(pathHandle))
    writes[path] = String(vm.dump(textHandle))
    const at = deletes.indexOf(path)
    if (at !== -1) deletes.splice(at, 1)
  })
  const deleteFile = vm.newFunction('deleteFile', (pathHandle) => {
    const path = norm(vm.getString(pathHandle))
    delete writes[path]
    if (!deletes.includes(path)) deletes.push(path)
  })
  const listFiles = vm.newFunction('listFiles', () => {
    const names = [...new Set([...Object.keys(files), ...Object.keys(writes)])].filter(name => !deletes.includes(name)).sort()
    const array = vm.newArray()
    names.forEach((name, index) => { const item = vm.newString(name); vm.setProp(array, index, item); item.dispose() })
    return array
  })
  for (const [name, fn] of [['readFile', readFile], ['writeFile', writeFile], ['deleteFile', deleteFile], ['listFiles', listFiles]]) {
    vm.setProp(workspace, name, fn)
    fn.dispose()
  }
  vm.setProp(vm.global, 'workspace', workspace)
  workspace.dispose()
  // JSON values in, as the code's globals (JSON is a JavaScript expression).
  const toHandle = value => vm.unwrapResult(vm.evalCode('(' + JSON.stringify(value === undefined ? null : value) + ')'))
  for (const [name, value] of Object.entries(globals || {})) {
    const handle = toHandle(value)
    vm.setProp(vm.global, name, handle)
    handle.dispose()
  }
  const credentialsObject = vm.newObject()
  const getCredential = vm.newFunction('get', (serviceHandle, keyHandle) => {
    const service = vm.getString(serviceHandle)
    const key = keyHandle ? vm.getString(keyHandle) : ''
    const values = (credentials || {})[service]
    if (!values) return { error: vm.newError('This tool did not declare the service ' + service + ', so its credentials are not available') }
    const value = key ? values[key] : Object.values(values)[0]
    return value === undefined ? vm.undefined : vm.newString(value)
  })
  vm.setProp(credentialsObject, 'get', getCredential)
  getCredential.dispose()
  vm.setProp(vm.global, 'credentials', credentialsObject)
  credentialsObject.dispose()
  if (bridge) {
    // fetch: the request goes to the server's side (its guard), this thread waits for the answer.
    const control = new Int32Array(bridge.control)
    let fetches = 0
    const fetchFn = vm.newFunction('fetch', (urlHandle) => {
      if (++fetches > bridge.maxFetches) return { error: vm.newError('At most ' + bridge.maxFetches + ' fetches a run') }
      Atomics.store(control, 0, 0)
      parentPort.postMessage({ type: 'fetch', url: vm.getString(urlHandle) })
      const left = deadline - Date.now()
      if (left <= 0 || Atomics.wait(control, 0, 0, left) === 'timed-out') return { error: vm.newError('The fetch did not finish before the time limit') }
      const answer = JSON.parse(new TextDecoder().decode(new Uint8Array(bridge.data, 0, Atomics.load(control, 1)).slice()))
      if (!answer.ok) return { error: vm.newError(answer.error) }
      return toHandle({ status: answer.status, contentType: answer.contentType, text: answer.text })
    })
    vm.setProp(vm.global, 'fetch', fetchFn)
    fetchFn.dispose()
  }

  let outcome
  const describe = (handle) => {
    const error = vm.dump(handle)
    handle.dispose()
    if (error && typeof error === 'object') {
      const message = error.message === 'interrupted' ? 'timed out after ' + timeoutMs + ' ms (stopped)' : String(error.message)
      return (error.name && error.name !== 'Error' && error.message !== 'interrupted' ? error.name + ': ' : '') + message + (error.stack && error.message !== 'interrupted' ? '\n' + String(error.stack).split('\n').slice(0, 8).join('\n') : '')
    }
    return String(error)
  }
  try {
    const evaluated = vm.evalCode(code, 'main.js')
    if (evaluated.error) outcome = { ok: false, error: describe(evaluated.error) }
    else {
      let handle = evaluated.value
      // A promise (async code): run its jobs until it settles, within the deadline.
      const state = vm.getPromiseState(handle)
      if (state.type !== 'fulfilled' || state.notAPromise !== true) {
        while (vm.getPromiseState(handle).type === 'pending') {
          const ran = runtime.executePendingJobs()
          if (ran.error) { outcome = { ok: false, error: describe(ran.error) }; break }
          if (ran.value === 0 && vm.getPromiseState(handle).type === 'pending') { outcome = { ok: false, error: 'the code awaits something that never settles (there are no timers or network in the sandbox)' }; break }
        }
        if (!outcome) {
          const settled = vm.getPromiseState(handle)
          if (settled.type === 'rejected') outcome = { ok: false, error: describe(settled.error) }
          else if (settled.type === 'fulfilled') {
            if (!settled.notAPromise) { handle.dispose(); handle = settled.value }
          }
        }
      }
      if (!outcome) {
        const value = vm.dump(handle)
        outcome = { ok: true, result: value === undefined ? undefined : value }
      }
      handle.dispose()
    }
  } catch (error) {
    outcome = { ok: false, error: /memory/i.test(String(error && error.message)) ? 'out of memory (the sandbox allows ' + Math.round(memoryBytes / 1048576) + ' MiB)' : String(error && error.message || error) }
  }
  if (!outcome.ok && /out of memory/i.test(outcome.error || '')) outcome.error = 'out of memory (the sandbox allows ' + Math.round(memoryBytes / 1048576) + ' MiB)'
  if (cut.stdout) output.stdout += '\n[… output cut at ' + outputChars + ' characters]'
  if (cut.stderr) output.stderr += '\n[… cut at ' + outputChars + ' characters]'
  parentPort.postMessage({ ...outcome, ...output, writes, deletes })
  try { vm.dispose(); runtime.dispose() } catch {}
})().catch(error => parentPort.postMessage({ ok: false, error: String(error && error.message || error), ...output, writes: {}, deletes: [] }))
`

let packagePaths: { core: string, variant: string } | undefined

/** Where QuickJS's packages are. Resolved at the first run, not at module load: in the built server `import.meta.url` names the entry only once it has run. */
function quickjsPackages(): { core: string, variant: string } {
  const require = createRequire(import.meta.url)
  return packagePaths ??= { core: require.resolve('quickjs-emscripten-core'), variant: require.resolve('@jitl/quickjs-wasmfile-release-sync') }
}

/** Answers one `fetch` of the code: the answer as JSON in the shared buffer, its length beside it, then the waiting thread woken. */
async function answerFetch(bridge: { control: SharedArrayBuffer, data: SharedArrayBuffer }, fetchForCode: NonNullable<SandboxRun['fetch']>, url: string): Promise<void> {
  let answer: Record<string, unknown>
  try {
    answer = { ok: true, ...await fetchForCode(url) }
  } catch (error) {
    answer = { ok: false, error: (error as Error).message }
  }
  const encoder = new TextEncoder()
  let bytes = encoder.encode(JSON.stringify(answer))
  if (bytes.byteLength > bridge.data.byteLength && typeof answer.text === 'string') {
    // Cut the text until the answer fits (characters may take up to 3 bytes as UTF-8, and escapes more).
    let text = answer.text.slice(0, Math.floor(bridge.data.byteLength / 6))
    bytes = encoder.encode(JSON.stringify({ ...answer, text }))
    while (bytes.byteLength > bridge.data.byteLength) bytes = encoder.encode(JSON.stringify({ ...answer, text: text = text.slice(0, text.length / 2) }))
  }
  new Uint8Array(bridge.data).set(bytes)
  const control = new Int32Array(bridge.control)
  Atomics.store(control, 1, bytes.byteLength)
  Atomics.store(control, 0, 1)
  Atomics.notify(control, 0)
}

/** Runs `run` in a fresh worker; resolves with its outcome (never rejects for the code's own faults). */
export function runInSandbox(run: SandboxRun, signal?: AbortSignal): Promise<SandboxOutcome> {
  const { fetch: fetchForCode, ...plain } = run
  const bridge = fetchForCode ? { control: new SharedArrayBuffer(8), data: new SharedArrayBuffer(FETCH_ANSWER_BYTES), maxFetches: MAX_FETCHES } : undefined
  const worker = new Worker(SANDBOX_WORKER, {
    eval: true,
    workerData: { ...quickjsPackages(), run: plain, bridge },
    // The worker's own heap: the files handed in, the output, and QuickJS's WebAssembly memory beside it.
    resourceLimits: { maxOldGenerationSizeMb: 64 + Math.ceil(run.memoryBytes / 1048576), maxYoungGenerationSizeMb: 16 },
    stdout: true,
    stderr: true,
  })
  return new Promise<SandboxOutcome>((resolve) => {
    let settled = false
    const finish = (outcome: SandboxOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(hardStop)
      signal?.removeEventListener('abort', onAbort)
      void worker.terminate()
      resolve(outcome)
    }
    const failed = (error: string): SandboxOutcome => ({ ok: false, stdout: '', stderr: '', error, writes: {}, deletes: [] })
    // QuickJS stops itself at the deadline; this is for code stuck where it cannot (a host call).
    const hardStop = setTimeout(() => finish(failed(`timed out after ${run.timeoutMs} ms (stopped)`)), run.timeoutMs + 1_000)
    const onAbort = () => finish(failed('stopped: the job was stopped or the call timed out'))
    signal?.addEventListener('abort', onAbort, { once: true })
    worker.on('message', (message: SandboxOutcome | { type: 'fetch', url: string }) => {
      if (!('type' in message)) return finish(message)
      if (bridge && fetchForCode) void answerFetch(bridge, fetchForCode, message.url)
    })
    worker.once('error', (error: Error) => finish(failed(/heap|memory/i.test(error.message) ? `out of memory (the sandbox allows ${Math.round(run.memoryBytes / 1048576)} MiB)` : `the sandbox failed: ${error.message}`)))
    worker.once('exit', code => finish(failed(`the sandbox stopped (exit code ${code}) before the code finished`)))
  })
}
