/**
 * The agent's workbench: the tool-sources seed's core tools, each inside a boundary a shared
 * server can offer: the workspace file tools (workspace/), `run_code` in a WebAssembly sandbox
 * (code/), `bash` in a bubblewrap sandbox where the operator turned it on (code/), the tools agents write for their people, run in the same sandbox once approved
 * (user-tools/), `web_fetch` behind the SSRF guard and `web_search` through the operator's
 * provider (web/). Registered as built-ins from the settings (`tools.workspace`, `tools.code`, `tools.web`),
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
import { bashTool } from './code/bash-tool'
import { findBubblewrap } from './code/bash-sandbox'
import { sandboxFetcher, webRequestLimiter, webTools } from './web/web-tools'
import type { UserTools } from './user-tools/user-tools'
import { userToolTools } from './user-tools/user-tool-tools'

export interface WorkbenchParts {
  workspaces: Workspaces
  userTools: UserTools
  limiterFor: LimiterFactory
  /** Why a person may not reach the internet (their tools' fetches), or undefined. */
  internetDenial: (userId: string) => Promise<string | undefined>
}

export function registerWorkbenchTools(settings: ServerConfig['tools'], parts: WorkbenchParts): void {
  const workspace = settings.workspace.enabled ? parts.workspaces : undefined
  const webLimiter = webRequestLimiter(settings.web, parts.limiterFor)
  const bwrap = findBubblewrap()
  const modules: ServerToolModule[] = [
    ...(workspace ? workspaceFileTools(workspace) : []),
    ...(settings.code.enabled ? [runCodeTool(workspace, settings.code, bwrap)] : []),
    ...(settings.code.enabled ? userToolTools({ tools: parts.userTools, settings: settings.code, internetDenial: parts.internetDenial, fetch: sandboxFetcher(settings.web, webLimiter) }) : []),
    ...webTools(settings.web, webLimiter),
  ]
  for (const tool of modules) registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
  if (workspace) {
    // Listed even when off or without bubblewrap (as unavailable, saying how to enable it); offered only when it can run.
    const bash = bashTool(workspace, settings.bash, bwrap)
    registerServerTool(bash.tool.definition, bash.tool.handler, { ...bash.tool.options, override: true, source: { kind: 'builtin' }, unavailable: bash.unavailable })
  }
}
