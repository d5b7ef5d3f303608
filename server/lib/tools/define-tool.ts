/** The one-file-per-tool form: `defineServerTool` packages a tool for discovery or registration. */
import type { z } from 'zod'
import type { RegisterServerToolOptions, ServerToolDefinition, ServerToolHandler, ToolParameters, ToolRuntime } from './tool-types'

const SERVER_TOOL_MODULE = Symbol.for('or3.serverToolModule')

type InferToolArgs<P> = P extends z.ZodType ? z.output<P> : Record<string, unknown>

/** What `defineServerTool` takes: a flat description of one tool and its handler. */
export interface DefineServerToolInput<P extends ToolParameters | undefined> {
  name: string
  description: string
  /** JSON Schema object or zod object schema of the arguments; omit for tools without arguments. */
  parameters?: P
  runtime?: ToolRuntime
  timeoutMs?: number
  /** Safe to re-run after a crash interrupted it (lookups, calculations). Default false. */
  idempotent?: boolean
  /** Credentials it needs (`'github'` or `'github/token'`); the handler reads them from `context.credentials`. */
  requiresCredentials?: string[]
  /** Each call waits for its user's approval (see ServerToolDefinition.needsApproval). */
  needsApproval?: boolean
  /** What it reaches beyond answering (see ServerToolDefinition.capabilities). */
  capabilities?: ServerToolDefinition['capabilities']
  enabled?: boolean
  handler: ServerToolHandler<InferToolArgs<P>>
}

/** A tool packaged for registration: exactly the three arguments of `registerServerTool`. */
export interface ServerToolModule {
  readonly [SERVER_TOOL_MODULE]: true
  definition: ServerToolDefinition
  handler: ServerToolHandler<any>
  options: RegisterServerToolOptions
}

/**
 * Declares a tool in one file without registering it. Default-export the result from a file in
 * `server/tools/**` and it is discovered and registered at start-up.
 *
 * @example
 * export default defineServerTool({
 *   name: 'roll_die',
 *   description: 'Rolls a die with the given number of sides.',
 *   parameters: z.object({ sides: z.number().int().min(2).default(6) }),
 *   handler: ({ sides }) => ({ value: 1 + Math.floor(Math.random() * sides) }),
 * })
 */
export function defineServerTool<P extends ToolParameters | undefined = undefined>(
  input: DefineServerToolInput<P>,
): ServerToolModule {
  return {
    [SERVER_TOOL_MODULE]: true,
    definition: {
      type: 'function',
      function: { name: input.name, description: input.description, parameters: input.parameters },
      runtime: input.runtime,
      enabled: input.enabled,
      idempotent: input.idempotent,
      requiresCredentials: input.requiresCredentials,
      needsApproval: input.needsApproval,
      capabilities: input.capabilities,
    },
    handler: input.handler as ServerToolHandler<any>,
    options: { runtime: input.runtime, timeoutMs: input.timeoutMs },
  }
}

/** Whether a value was produced by `defineServerTool`. */
export function isServerToolModule(value: unknown): value is ServerToolModule {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SERVER_TOOL_MODULE] === true
}
