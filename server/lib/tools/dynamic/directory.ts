/**
 * The dynamic tools directory (seed 001's `tools/dynamic/`): tool files that appear, change and
 * go while the server runs. Each `.ts`, `.mts`, `.mjs` or `.js` file (names starting with `_` are
 * skipped) is loaded with jiti, in the forms of `server/tools/**`: `export default { name,
 * description, parameters, handler }`, `export default defineServerTool(…)` or `export {
 * definition, execute }`. Watched with chokidar: a new file is registered; a changed one replaces
 * its tool once the new version loads (the old one serves until then, and stays when the new one
 * is broken); a deleted one is unregistered. These files run with the server's privileges.
 */
import { mkdirSync } from 'node:fs'
import { extname, relative, resolve } from 'node:path'
import { watch, type FSWatcher } from 'chokidar'
import type { Jiti } from 'jiti'
import { resolveToolExport } from '../discovery'
import { getServerTool, registerServerTool, unregisterServerTool } from '../registry'
import type { DynamicToolFile } from '../../../../shared/types/tool'

const EXTENSIONS = new Set(['.ts', '.mts', '.mjs', '.js'])
/** A file is loaded once it has not changed for this long (an editor saving in several writes). */
const SETTLE_MS = 100

/** Where log lines go. */
export interface DynamicToolsLogger {
  info: (message: string) => void
  error: (message: string) => void
}

/** Whether `path` is a tool file of the directory (not skipped). */
export function isDynamicToolFile(path: string): boolean {
  const name = path.split(/[\\/]/).at(-1) ?? ''
  return EXTENSIONS.has(extname(name)) && !name.startsWith('_') && !name.startsWith('.') && !name.endsWith('.d.ts')
}

/** The watched directory and the tools its files registered. */
export class DynamicToolsDirectory {
  private readonly files = new Map<string, DynamicToolFile>()
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>()
  private readonly loading = new Map<string, Promise<void>>()
  private watcher: FSWatcher | undefined
  private readonly listeners = new Set<() => void>()
  /** Loads tool files: made with the first file (jiti was a fifteenth of every start's CPU, with or without a tool file). */
  private jiti: Promise<Jiti> | undefined

  constructor(readonly dir: string, private readonly logger: DynamicToolsLogger) {}

  /** Creates the directory if needed, loads every file in it, then watches it. */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true })
    const watcher = watch(this.dir, {
      ignoreInitial: false,
      depth: 4,
      ignored: (path, stats) => Boolean(stats?.isFile()) && !isDynamicToolFile(path),
    })
    this.watcher = watcher
    const initial: string[] = []
    let ready = false
    watcher.on('add', (path) => {
      if (ready) this.schedule(path)
      else initial.push(path)
    })
    watcher.on('change', path => this.schedule(path))
    watcher.on('unlink', path => this.remove(path))
    watcher.on('error', error => this.logger.error(`Watching ${this.dir} failed: ${(error as Error).message}`))
    await new Promise<void>(resolve => watcher.once('ready', () => resolve()))
    ready = true
    await Promise.all(initial.map(path => this.load(path)))
  }

  /** Each file with its tool, or why it did not load. */
  status(): DynamicToolFile[] {
    return [...this.files.values()].sort((a, b) => a.path.localeCompare(b.path))
  }

  /** Calls `listener` whenever the directory's tools changed (registered, replaced, removed). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Resolves once no load is pending (tests and shutdown). */
  async settled(): Promise<void> {
    while (this.timers.size > 0 || this.loading.size > 0) {
      await Promise.all(this.loading.values())
      if (this.timers.size > 0) await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
    }
  }

  /** Stops watching and unregisters the directory's tools. */
  async close(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    await this.watcher?.close()
    this.watcher = undefined
    for (const file of this.files.values()) if (file.tool) unregisterServerTool(file.tool)
    this.files.clear()
    this.listeners.clear()
  }

  private schedule(path: string): void {
    clearTimeout(this.timers.get(path))
    this.timers.set(path, setTimeout(() => {
      this.timers.delete(path)
      void this.load(path)
    }, SETTLE_MS))
  }

  private async load(path: string): Promise<void> {
    const previous = this.loading.get(path) ?? Promise.resolve()
    const next = previous.then(() => this.loadNow(path))
    this.loading.set(path, next)
    await next
    if (this.loading.get(path) === next) this.loading.delete(path)
  }

  private async loadNow(path: string): Promise<void> {
    const shown = relative(this.dir, path)
    const before = this.files.get(path)
    try {
      // moduleCache off: each load reads the file as it is now.
      this.jiti ??= import('jiti').then(({ createJiti }) => createJiti(import.meta.url, { moduleCache: false, fsCache: false }))
      const tool = resolveToolExport(await (await this.jiti).import(resolve(path)))
      const name = tool.definition.function.name
      const existing = getServerTool(name)
      if (existing && !(existing.source?.kind === 'dynamic' && existing.source.name === shown)) {
        throw new Error(`the name "${name}" is taken by ${existing.source?.kind === 'dynamic' ? `another file (${existing.source.name})` : 'another tool'}`)
      }
      registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'dynamic', name: shown } })
      if (before?.tool && before.tool !== name) unregisterServerTool(before.tool)
      this.files.set(path, { path: shown, tool: name, loadedAt: Date.now() })
      this.logger.info(`${before?.tool ? 'Reloaded' : 'Registered'} ${name} from ${shown}`)
      this.changed()
    } catch (error) {
      const reason = (error as Error).message
      // The version that loaded before keeps serving.
      this.files.set(path, { path: shown, ...(before?.tool ? { tool: before.tool, loadedAt: before.loadedAt } : {}), error: reason })
      this.logger.error(`Could not load ${shown}: ${reason}${before?.tool ? ` (the previous version of ${before.tool} stays)` : ''}`)
      this.changed()
    }
  }

  private remove(path: string): void {
    clearTimeout(this.timers.get(path))
    this.timers.delete(path)
    const file = this.files.get(path)
    this.files.delete(path)
    if (file?.tool) {
      unregisterServerTool(file.tool)
      this.logger.info(`Removed ${file.tool} (${file.path} was deleted)`)
      this.changed()
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener()
  }
}
