/**
 * One MCP server's tools in the registry: each listed tool registered as `<server>__<tool>` with
 * its schema, annotations, source and MCP Apps link (a tool only its page may call is registered
 * switched off, so no model is offered it), replaced when the list changes and withdrawn when it goes.
 * How a call reaches the server is the owner's: one shared connection, or the caller's own.
 */
import type { Tool } from '@modelcontextprotocol/client'
import { getServerTool, registerServerTool, unregisterServerTool } from '../registry'
import type { ToolExecutionContext } from '../tool-types'
import type { JsonSchemaObject } from '../../openrouter/types'
import type { McpServerConfig } from './config'
import { mcpToolNames } from './tool-names'
import { appLinkOf } from './apps'
import type { McpServerStatus } from '../../../../shared/types/tool'

/** The schema as the registry takes it: an object schema, without a `$schema` the validator may not know. */
function toParameters(inputSchema: Tool['inputSchema']): JsonSchemaObject {
  const { $schema: _ignored, ...schema } = (inputSchema ?? {}) as Record<string, unknown>
  return { ...schema, type: 'object' } as JsonSchemaObject
}

/** How the owner runs a call of `tool` (its MCP name). */
export type McpCall = (tool: string, args: Record<string, unknown>, context: ToolExecutionContext) => Promise<string>

export class McpToolSet {
  private registered: string[] = []
  private skippedTools: McpServerStatus['skipped'] = []

  constructor(
    private readonly config: McpServerConfig,
    private readonly call: McpCall,
    private readonly unavailable: () => string | undefined,
    private readonly logger: { warn: (message: string) => void },
    /** Credentials every call needs (a per-user server's placeholders). */
    private readonly requiresCredentials: string[] = [],
  ) {}

  /** Registered tools. */
  get size(): number {
    return this.registered.length
  }

  get skipped(): McpServerStatus['skipped'] {
    return this.skippedTools
  }

  /** Registers the server's current tools (replacing changed ones) and withdraws those it no longer lists. */
  sync(tools: readonly Tool[]): void {
    const allowed = this.config.tools ? new Set(this.config.tools) : undefined
    const offered = tools.filter(tool => !allowed || allowed.has(tool.name))
    const names = mcpToolNames(this.config.name, offered.map(tool => tool.name))
    const registered: string[] = []
    const skipped: McpServerStatus['skipped'] = []
    offered.forEach((tool, index) => {
      const name = names[index]!
      const existing = getServerTool(name)
      if (existing && !(existing.source?.kind === 'mcp' && existing.source.name === this.config.name)) {
        skipped.push({ tool: tool.name, reason: `the name ${name} is taken by another tool` })
        return
      }
      const annotations = tool.annotations ?? {}
      const app = appLinkOf(this.config.name, tool)
      try {
        registerServerTool(
          // A tool only its app's page may call is kept (for the page) but never offered to a model.
          { type: 'function', function: { name, description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${this.config.name})`, parameters: toParameters(tool.inputSchema) }, ...(!app.visibility.includes('model') ? { enabled: false } : {}) },
          (args, context) => this.call(tool.name, args, context),
          {
            runtime: 'server',
            override: true,
            idempotent: annotations.idempotentHint === true || annotations.readOnlyHint === true,
            // The SDK's own timeouts (progress-extended) fire first; this bounds the rest.
            timeoutMs: this.config.maxTotalTimeoutMs + 5_000,
            source: { kind: 'mcp', name: this.config.name },
            unavailable: this.unavailable,
            requiresCredentials: this.requiresCredentials,
            app,
            ...(this.config.groups ? { groups: this.config.groups } : {}),
          },
        )
        registered.push(name)
      } catch (error) {
        skipped.push({ tool: tool.name, reason: (error as Error).message })
      }
    })
    for (const name of this.registered) if (!registered.includes(name)) unregisterServerTool(name)
    this.registered = registered
    this.skippedTools = skipped
    for (const item of skipped) this.logger.warn(`MCP server "${this.config.name}": tool "${item.tool}" skipped: ${item.reason}`)
  }

  /** Withdraws every tool. */
  clear(): void {
    for (const name of this.registered) unregisterServerTool(name)
    this.registered = []
  }
}
