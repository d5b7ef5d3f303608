/** The registry most server tests start each test with: exactly the built-in tools. */
import { builtinServerTools } from '../../server/lib/tools/builtin'
import { clearServerTools, registerServerTool } from '../../server/lib/tools/registry'

/** Empties the tool registry and registers the built-in tools (call it in `beforeEach`). */
export function registerBuiltinToolsOnly(): void {
  clearServerTools()
  for (const tool of builtinServerTools) registerServerTool(tool.definition, tool.handler, tool.options)
}
