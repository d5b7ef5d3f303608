/**
 * The server tool registry: one module-scoped map of tools that background chat jobs and
 * workflows execute. Nitro plugins register tools at start-up; the tool loop executes them.
 *
 * Plain Node module on purpose (explicit imports only) so it can be unit-tested without Nitro.
 */
import type { ValidateFunction } from 'ajv'
import type { z } from 'zod'
import { parseToolArguments } from '../../lib/tools/tool-arguments'
import { serializeToolResult } from '../../lib/tools/tool-result'
import {
  assertValidToolName,
  compileArgumentsValidator,
  formatValidationErrors,
  releaseArgumentsValidator,
  toJsonSchemaParameters,
} from '../../lib/tools/tool-schema'
import { runWithDeadline } from '../../lib/tools/run-with-deadline'
import {
  TOOL_RUNTIMES,
  type OpenRouterToolDefinition,
  type RegisteredServerTool,
  type RegisterServerToolOptions,
  type ServerToolDefinition,
  type ServerToolHandler,
  type ToolErrorCode,
  type ToolExecutionContext,
  type ToolExecutionResult,
  type ToolParameters,
  type ToolRuntime,
} from '../../lib/tools/tool-types'

export type {
  JsonSchemaObject,
  OpenRouterToolDefinition,
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

/** Default per-call limit when neither the tool nor the configuration sets one. */
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000

/** Largest delay setTimeout honours; longer limits would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647

interface RegistryEntry {
  tool: RegisteredServerTool
  validate: ValidateFunction
  /** Present for zod-defined tools: refinements and transforms JSON Schema cannot express. */
  zodSchema?: z.ZodType
}

const registry = new Map<string, RegistryEntry>()
let defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS

function assertTimeout(name: string, timeoutMs: unknown): asserts timeoutMs is number {
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new TypeError(`Tool "${name}": timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}.`)
  }
}

function assertRuntime(name: string, runtime: unknown): asserts runtime is ToolRuntime {
  if (!TOOL_RUNTIMES.includes(runtime as ToolRuntime)) {
    throw new TypeError(`Tool "${name}": runtime must be one of ${TOOL_RUNTIMES.join(', ')}, got ${JSON.stringify(runtime)}.`)
  }
}

/** Sets registry-wide defaults from runtime config (`backgroundJobs.toolExecution.defaultTimeoutMs`). */
export function configureServerToolRegistry(options: { defaultTimeoutMs?: number }): void {
  if (options.defaultTimeoutMs !== undefined) {
    assertTimeout('*', options.defaultTimeoutMs)
    defaultTimeoutMs = options.defaultTimeoutMs
  }
}

/**
 * Registers a tool under `definition.function.name`. Throws on an invalid definition or when the
 * name is taken, unless `options.override` is set.
 *
 * @example
 * registerServerTool(
 *   { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } },
 *   args => String(args.text),
 *   { runtime: 'server', timeoutMs: 2000 },
 * )
 */
export function registerServerTool<TArgs = Record<string, unknown>>(
  definition: ServerToolDefinition,
  handler: ServerToolHandler<TArgs>,
  options: RegisterServerToolOptions = {},
): RegisteredServerTool {
  if (typeof definition !== 'object' || definition === null || typeof definition.function !== 'object' || definition.function === null) {
    throw new TypeError('Tool definition must have the shape { type: "function", function: { name, description, parameters } }.')
  }
  const name = definition.function.name
  assertValidToolName(name)
  if (definition.type !== undefined && definition.type !== 'function') {
    throw new TypeError(`Tool "${name}": definition.type must be "function", got ${JSON.stringify(definition.type)}.`)
  }
  if (typeof handler !== 'function') {
    throw new TypeError(`Tool "${name}": handler must be a function.`)
  }
  if (registry.has(name) && !options.override) {
    throw new Error(`Tool "${name}" is already registered; pass { override: true } to replace it.`)
  }
  const runtime = options.runtime ?? definition.runtime ?? 'hybrid'
  assertRuntime(name, runtime)
  if (options.timeoutMs !== undefined) assertTimeout(name, options.timeoutMs)
  const description = definition.function.description ?? ''
  if (typeof description !== 'string') {
    throw new TypeError(`Tool "${name}": description must be a string.`)
  }

  const rawParameters = definition.function.parameters
  const parameters = toJsonSchemaParameters(name, rawParameters)
  const validate = compileArgumentsValidator(name, parameters)

  const previous = registry.get(name)
  if (previous) releaseArgumentsValidator(previous.tool.parameters)

  const tool: RegisteredServerTool = Object.freeze({
    name,
    description,
    parameters,
    runtime,
    enabled: definition.enabled ?? true,
    timeoutMs: options.timeoutMs,
    idempotent: options.idempotent ?? definition.idempotent ?? false,
    handler: handler as ServerToolHandler<any>,
  })
  const isZod = typeof rawParameters === 'object' && rawParameters !== null && '_zod' in rawParameters
  registry.set(name, { tool, validate, zodSchema: isZod ? (rawParameters as z.ZodType) : undefined })
  return tool
}

/** Removes a tool; returns whether one was registered under that name. */
export function unregisterServerTool(name: string): boolean {
  const entry = registry.get(name)
  if (!entry) return false
  releaseArgumentsValidator(entry.tool.parameters)
  return registry.delete(name)
}

/** The registered tool of that name, if any. */
export function getServerTool(name: string): RegisteredServerTool | undefined {
  return registry.get(name)?.tool
}

/** Every registered tool, in registration order. */
export function listServerTools(): RegisteredServerTool[] {
  return [...registry.values()].map(entry => entry.tool)
}

/**
 * Enabled server-executable tools in the exact shape of OpenRouter's `tools: [...]`.
 * With `names`, only those tools (unknown names are ignored). Client-only tools are never offered.
 */
export function getEnabledDefinitions(names?: readonly string[]): OpenRouterToolDefinition[] {
  const wanted = names ? new Set(names) : null
  return listServerTools()
    .filter(tool => tool.enabled && tool.runtime !== 'client' && (!wanted || wanted.has(tool.name)))
    .map(tool => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: structuredClone(tool.parameters) },
    }))
}

let toolsReady: Promise<void> = Promise.resolve()

/**
 * Resolves once tools that load asynchronously at start-up (server/tools/** discovery) are
 * registered. Nitro does not await async plugins, so anything that lists or offers tools waits here.
 */
export function whenServerToolsReady(): Promise<void> {
  return toolsReady
}

/** Holds `whenServerToolsReady()` until `loading` settles (whether it succeeds or not). */
export function deferServerToolsReady(loading: Promise<unknown>): void {
  const settled = loading.then(() => undefined, () => undefined)
  toolsReady = Promise.all([toolsReady, settled]).then(() => undefined)
}

/** Drops every tool. For tests and hot reload. */
export function clearServerTools(): void {
  for (const entry of registry.values()) releaseArgumentsValidator(entry.tool.parameters)
  registry.clear()
}

function failure(
  toolName: string,
  errorCode: ToolErrorCode,
  error: string,
  startedAt: number,
  runtime?: ToolRuntime,
): ToolExecutionResult {
  return {
    result: null,
    toolName,
    timedOut: errorCode === 'timeout',
    error,
    errorCode,
    runtime,
    executionTimeMs: Math.round(performance.now() - startedAt),
  }
}

function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || thrown.name
  return typeof thrown === 'string' ? thrown : JSON.stringify(thrown) ?? String(thrown)
}

function formatZodIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .map(issue => (issue.path.length ? `field "${issue.path.join('.')}" ${issue.message}` : issue.message))
    .join('; ')
}

/**
 * Executes a registered tool with the model's JSON arguments. Never throws and never rejects:
 * unknown tools, client-only tools, invalid arguments, timeouts, aborts, handler errors and
 * unusable results all come back as `error` (with `errorCode`) so the caller can feed them to the model.
 */
export async function executeServerTool(
  toolName: string,
  argsJson: string | null | undefined,
  context: Partial<ToolExecutionContext> = {},
): Promise<ToolExecutionResult> {
  const startedAt = performance.now()
  const entry = registry.get(toolName)
  if (!entry) {
    return failure(toolName, 'not_registered', `Tool "${toolName}" is not registered on server.`, startedAt)
  }
  const { tool } = entry
  if (tool.runtime === 'client') {
    return failure(toolName, 'client_only', `Tool "${toolName}" is client-only and cannot run on the server.`, startedAt, tool.runtime)
  }
  if (!tool.enabled) {
    return failure(toolName, 'disabled', `Tool "${toolName}" is disabled.`, startedAt, tool.runtime)
  }

  const parsed = parseToolArguments(argsJson)
  if (!parsed.ok) {
    return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${parsed.error}.`, startedAt, tool.runtime)
  }
  let args: Record<string, unknown> = parsed.args
  if (!entry.validate(args)) {
    const reason = formatValidationErrors(entry.validate.errors)
    return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${reason}.`, startedAt, tool.runtime)
  }
  if (entry.zodSchema) {
    const checked = entry.zodSchema.safeParse(args)
    if (!checked.success) {
      const reason = formatZodIssues(checked.error.issues)
      return failure(toolName, 'invalid_arguments', `Invalid arguments for tool "${toolName}": ${reason}.`, startedAt, tool.runtime)
    }
    args = checked.data as Record<string, unknown>
  }

  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const outcome = await runWithDeadline(
    signal => tool.handler(args, {
      userId: context.userId ?? '',
      threadId: context.threadId ?? '',
      jobId: context.jobId ?? '',
      signal,
    }),
    { timeoutMs, signal: context.signal },
  )

  switch (outcome.status) {
    case 'timeout':
      return failure(toolName, 'timeout', `Tool "${toolName}" timed out after ${timeoutMs} ms.`, startedAt, tool.runtime)
    case 'aborted':
      return failure(toolName, 'aborted', `Tool "${toolName}" was aborted before it finished.`, startedAt, tool.runtime)
    case 'rejected':
      return failure(toolName, 'execution_failed', `Tool "${toolName}" failed: ${describeThrown(outcome.error)}`, startedAt, tool.runtime)
    case 'fulfilled': {
      const serialized = serializeToolResult(outcome.value)
      if (!serialized.ok) {
        return failure(toolName, 'invalid_result', `Tool "${toolName}" returned an unusable result: ${serialized.error}.`, startedAt, tool.runtime)
      }
      return {
        result: serialized.result,
        toolName,
        timedOut: false,
        runtime: tool.runtime,
        executionTimeMs: Math.round(performance.now() - startedAt),
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One-file-per-tool form

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
    },
    handler: input.handler as ServerToolHandler<any>,
    options: { runtime: input.runtime, timeoutMs: input.timeoutMs },
  }
}

/** Whether a value was produced by `defineServerTool`. */
export function isServerToolModule(value: unknown): value is ServerToolModule {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SERVER_TOOL_MODULE] === true
}
