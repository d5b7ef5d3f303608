/**
 * The agent's workbench: the tool-sources seed's core tools, each inside a boundary a shared
 * server can offer: the workspace file tools (workspace/), `run_code` in a WebAssembly sandbox
 * (code/), `web_fetch` behind the SSRF guard and `web_search` through the operator's provider
 * (web/). Registered as built-ins from the settings (`tools.workspace`, `tools.code`, `tools.web`),
 * each with its policy capability. Registering again (another runtime in
 * the same process, a dev reload) replaces them.
 */
import type { ServerConfig } from '../config/server-config'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { registerServerTool } from './registry'
import type { ServerToolModule } from './define-tool'
import { workspaceFileTools } from './workspace/file-tools'
import type { Workspaces } from './workspace/workspaces'
import { runCodeTool } from './code/run-code-tool'
import { webTools } from './web/web-tools'

export function registerWorkbenchTools(settings: ServerConfig['tools'], parts: { workspaces: Workspaces, limiterFor: LimiterFactory }): void {
  const workspace = settings.workspace.enabled ? parts.workspaces : undefined
  const modules: ServerToolModule[] = [
    ...(workspace ? workspaceFileTools(workspace) : []),
    ...(settings.code.enabled ? [runCodeTool(workspace, settings.code)] : []),
    ...webTools(settings.web, parts.limiterFor),
  ]
  for (const tool of modules) registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
}
