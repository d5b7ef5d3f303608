/**
 * Every source of tools besides the built ones, as routes see them: the MCP servers (with the
 * admin's catalog of them), the dynamic tools directory, and the feed that tells open pages the
 * tools changed. createServerRuntime builds it; `useToolSources()` is how routes reach it.
 */
import type { DynamicToolsDirectory } from './dynamic/directory'
import type { McpServerCatalog } from './mcp/admin-servers'
import type { McpServers } from './mcp/servers'
import { listServerTools, whenServerToolsReady } from './registry'
import { missingCredentials } from './execute-tool'
import type { ToolChangeFeed } from './tool-changes'
import type { ToolPolicy } from './policy/tool-policy'
import type { CredentialVault } from './credentials/vault'
import type { McpAuthorizations } from './mcp/oauth/authorizations'
import type { McpCredentialConsents } from './mcp/consents'
import type { Workspaces } from './workspace/workspaces'
import type { UserTools } from './user-tools/user-tools'
import { McpAdminError } from './mcp/admin-servers'
import type { McpCredentialConsent } from '../../../shared/types/credentials'
import type { PolicyPrincipal } from './policy/rules'
import type { McpServerStatus, ToolCatalog, ToolSummary } from '../../../shared/types/tool'

export interface ToolSourcesParts {
  mcp: McpServers
  mcpCatalog: McpServerCatalog
  dynamicTools: DynamicToolsDirectory | undefined
  changes: ToolChangeFeed
  policy: ToolPolicy
  credentials: CredentialVault
  authorizations: McpAuthorizations
  consents: McpCredentialConsents
  workspaces: Workspaces
  userTools: UserTools
}

export class ToolSources {
  constructor(private readonly parts: ToolSourcesParts) {}

  /** The admin's view of MCP servers: list, add, edit, remove, reconnect. */
  get mcpCatalog(): McpServerCatalog {
    return this.parts.mcpCatalog
  }

  /** Conversations' and workflow runs' workspace files (the file tools' and the file panel's). */
  get workspaces(): Workspaces {
    return this.parts.workspaces
  }

  /** The tools agents wrote for their people, with the people's approvals. */
  get userTools(): UserTools {
    return this.parts.userTools
  }

  /** Who may use which tools: the operator's rules and the admin's. */
  get policy(): ToolPolicy {
    return this.parts.policy
  }

  /** Tool credentials: each user's own (sealed) and the server-wide ones. */
  get credentials(): CredentialVault {
    return this.parts.credentials
  }

  /** People's OAuth authorisations with MCP servers: connect, callback, disconnect, list. */
  get authorizations(): McpAuthorizations {
    return this.parts.authorizations
  }

  /** Where `userId` stands with each admin's MCP server that would send their own credentials. */
  credentialConsents(userId: string): Promise<McpCredentialConsent[]> {
    return this.parts.consents.list(userId, this.parts.mcp.consentServers())
  }

  /**
   * `userId` allows `server` their credentials at `target`, the address they were shown, and
   * `credentials`, the ones they were shown (when given): 404 when no admin's server asks, 409 when
   * its address or its credentials changed since (they look again). The consent covers the
   * credentials the server asks for now, and a later one asks again.
   */
  async allowCredentials(userId: string, server: string, target: string, credentials?: readonly string[]): Promise<McpCredentialConsent[]> {
    const current = this.parts.mcp.consentServers().find(item => item.name === server)
    if (!current) throw new McpAdminError(404, `No MCP server "${server}" asks for your credentials.`)
    if (current.target !== target) throw new McpAdminError(409, `MCP server "${server}" now sends to ${current.target}, not ${target}. Check that address, then allow it again.`)
    const added = credentials ? current.needs.filter(need => !credentials.includes(need)) : []
    if (added.length > 0) throw new McpAdminError(409, `MCP server "${server}" now also asks for ${added.map(need => `"${need}"`).join(', ')}. Check what it asks for, then allow it again.`)
    await this.parts.consents.allow(userId, server, target, current.needs)
    this.parts.mcp.consentChanged(userId, server)
    return this.credentialConsents(userId)
  }

  /** `userId` takes their consent to `server` back: its next call asks again. */
  async withdrawCredentials(userId: string, server: string): Promise<McpCredentialConsent[]> {
    await this.parts.consents.withdraw(userId, server)
    this.parts.mcp.consentChanged(userId, server)
    return this.credentialConsents(userId)
  }

  /** Each MCP server's state, in config order. */
  mcpStatuses(): McpServerStatus[] {
    return this.parts.mcp.statuses()
  }

  /** For `GET /api/health`: tools registered, and each MCP server's state (a server that is down does not make this one unhealthy). */
  async health(): Promise<{ registered: number, mcpServers: Array<Pick<McpServerStatus, 'name' | 'state'>> }> {
    await whenServerToolsReady()
    return { registered: listServerTools().length, mcpServers: this.mcpStatuses().map(server => ({ name: server.name, state: server.state })) }
  }

  /**
   * The enabled tools as `principal` sees them (each with its source, and why they cannot use it
   * now: denied by the tool policy, or its MCP server down), once start-up loading is done, with
   * each MCP server's state; the dynamic directory's path and its files' load errors only for admins.
   */
  async catalog(principal: PolicyPrincipal): Promise<ToolCatalog> {
    await whenServerToolsReady()
    const [denial, credentials] = await Promise.all([this.parts.policy.accessFor(principal), this.parts.credentials.forUser(principal.userId)])
    // A server that connects per person lists its tools through this person's connection the first time.
    await this.parts.mcp.discoverFor(principal.userId, credentials)
    const authorization = await this.parts.mcp.authorizationNotes(principal.userId)
    const tools: ToolSummary[] = listServerTools()
      .filter(tool => tool.enabled)
      .map((tool) => {
        const denied = denial(tool)
        const missing = missingCredentials(tool.requiresCredentials, credentials)
        const unavailable = denied !== undefined
          ? `You cannot use this tool: ${denied}.`
          : missing.length > 0
            ? `It needs ${missing.map(need => `"${need}"`).join(', ')}: add ${missing.length === 1 ? 'it' : 'them'} in Settings → Credentials.`
            : (tool.source?.kind === 'mcp' && tool.source.name ? authorization.get(tool.source.name) : undefined) ?? tool.unavailable?.()
        return { name: tool.name, description: tool.description, parameters: tool.parameters, runtime: tool.runtime, ...(tool.source ? { source: tool.source } : {}), ...(tool.capabilities.length > 0 ? { capabilities: tool.capabilities } : {}), ...(unavailable ? { unavailable } : {}), ...(tool.app?.resourceUri ? { app: true as const } : {}) }
      })
    const dynamic = this.parts.dynamicTools
    return {
      tools,
      mcpServers: this.mcpStatuses(),
      dynamicTools: principal.role === 'admin' && dynamic ? { dir: dynamic.dir, files: dynamic.status() } : null,
    }
  }

  /** "The tools changed": any registration, an MCP server going down or back, a tool file that broke. */
  get changes(): ToolChangeFeed {
    return this.parts.changes
  }
}
