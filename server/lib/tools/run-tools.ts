/**
 * The tool registry as a job's run meets it: a tool by name (whether it may run again after a
 * crash), the tools a model may be offered, when the tools loaded at start-up are all registered,
 * and running one. The runtime hands
 * the process's registry (`processTools`, the seed's module-level API) to the job manager, which
 * gives it to every run, as it does the store and the live hub.
 */
import { executeServerTool } from './execute-tool'
import { getEnabledDefinitions, getServerTool, whenServerToolsReady } from './registry'
import type { RegisteredServerTool } from './tool-types'

/** What a run reads of the registry, and how it runs a tool. */
export interface RunTools {
  get: (name: string) => RegisteredServerTool | undefined
  /** The tools a model may be offered now (of `names` when given), in OpenRouter's `tools` shape. */
  definitions: typeof getEnabledDefinitions
  /** Resolves once the tools loaded at start-up (tool files, MCP servers) are registered. */
  ready: () => Promise<void>
  run: typeof executeServerTool
}

/** This process's registry. */
export const processTools: RunTools = { get: getServerTool, definitions: getEnabledDefinitions, ready: whenServerToolsReady, run: executeServerTool }
