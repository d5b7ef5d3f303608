/**
 * The seed's server tool registry API, at the seed's path. The registry itself lives in
 * server/lib/tools/ (plain TypeScript); this file is its public, auto-imported face.
 */

/** Registers a tool (definition, handler, options); throws on an invalid definition or a taken name. */
export { registerServerTool } from '../../lib/tools/registry'
/** Removes a tool; returns whether one was registered under that name. */
export { unregisterServerTool } from '../../lib/tools/registry'
/** The registered tool of that name, if any. */
export { getServerTool } from '../../lib/tools/registry'
/** Every registered tool, in registration order. */
export { listServerTools } from '../../lib/tools/registry'
/** Enabled server-executable tools in the shape of OpenRouter's `tools: [...]`. */
export { getEnabledDefinitions } from '../../lib/tools/registry'
/** Executes a registered tool with the model's JSON arguments; never throws. */
export { executeServerTool } from '../../lib/tools/execute-tool'
/** Declares a tool in one file (default-export it from server/tools/**). */
export { defineServerTool } from '../../lib/tools/define-tool'

export type { JsonSchemaObject, OpenRouterToolDefinition } from '../../lib/openrouter/types'
export type {
  RegisteredServerTool,
  RegisterServerToolOptions,
  ServerToolDefinition,
  ServerToolHandler,
  ToolErrorCode,
  ToolExecutionContext,
  ToolExecutionResult,
  ToolParameters,
  ToolRuntime,
} from '../../lib/tools/tool-types'
