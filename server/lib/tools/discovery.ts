import { defineServerTool, isServerToolModule } from './define-tool'
import { registerServerTool } from './registry'
import type { RegisterServerToolOptions, ServerToolDefinition, ServerToolHandler } from './tool-types'

/** A tool file as discovery sees it: where it is (for reports) and how to import it. */
export interface ToolModuleSource {
  path: string
  load: () => Promise<unknown>
}

export interface ToolDiscoveryReport {
  registered: Array<{ path: string, name: string }>
  failed: Array<{ path: string, error: string }>
}

interface ResolvedTool {
  definition: ServerToolDefinition
  handler: ServerToolHandler<any>
  options: RegisterServerToolOptions
}

const EXPECTED_EXPORTS = 'expected `export default defineServerTool({...})`, `export default { name, description, parameters, handler }` or `export { definition, execute }`'

function fromDefinitionAndExecute(source: Record<string, unknown>): ResolvedTool | null {
  if (!('definition' in source) && !('execute' in source)) return null
  if (typeof source.definition !== 'object' || source.definition === null) {
    throw new TypeError('exports `execute` but no `definition` object')
  }
  if (typeof source.execute !== 'function') {
    throw new TypeError('exports `definition` but `execute` is not a function')
  }
  return { definition: source.definition as ServerToolDefinition, handler: source.execute as ServerToolHandler<any>, options: {} }
}

/** `defineServerTool`'s input written out without the helper (a file that cannot import it). */
function fromPlainDefinition(candidate: Record<string, unknown>): ResolvedTool | null {
  if (typeof candidate.name !== 'string' || typeof candidate.handler !== 'function') return null
  return defineServerTool(candidate as unknown as Parameters<typeof defineServerTool>[0])
}

/** Finds the tool a module exports, or throws saying what the file should export instead. */
export function resolveToolExport(namespace: unknown): ResolvedTool {
  if (typeof namespace !== 'object' || namespace === null) throw new TypeError(`exports nothing; ${EXPECTED_EXPORTS}`)
  const exports = namespace as Record<string, unknown>
  const candidate = exports.default
  if (isServerToolModule(candidate)) return candidate
  if (typeof candidate === 'object' && candidate !== null) {
    const plain = fromPlainDefinition(candidate as Record<string, unknown>)
    if (plain) return plain
  }
  if (typeof candidate === 'object' && candidate !== null) {
    const resolved = fromDefinitionAndExecute(candidate as Record<string, unknown>)
    if (resolved) return resolved
  }
  const named = fromDefinitionAndExecute(exports)
  if (named) return named
  throw new TypeError(`exports no tool; ${EXPECTED_EXPORTS}`)
}

/**
 * Imports and registers every tool file. A file that fails to import, exports no tool, or whose
 * tool is invalid or clashes with an existing name is reported and skipped; the others still load.
 */
export async function registerToolModules(
  sources: readonly ToolModuleSource[],
  register: typeof registerServerTool = registerServerTool,
): Promise<ToolDiscoveryReport> {
  const report: ToolDiscoveryReport = { registered: [], failed: [] }
  const loaded = await Promise.allSettled(sources.map(source => source.load()))
  sources.forEach((source, index) => {
    const outcome = loaded[index]!
    try {
      if (outcome.status === 'rejected') {
        throw new Error(`failed to import: ${(outcome.reason as Error)?.message ?? String(outcome.reason)}`)
      }
      const tool = resolveToolExport(outcome.value)
      const registered = register(tool.definition, tool.handler, { ...tool.options, source: { kind: 'file', name: source.path } })
      report.registered.push({ path: source.path, name: registered.name })
    } catch (error) {
      report.failed.push({ path: source.path, error: (error as Error).message })
    }
  })
  return report
}
