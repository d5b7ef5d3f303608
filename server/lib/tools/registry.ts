/**
 * The server tool registry: one module-scoped map of tools that background chat jobs and
 * workflows execute. Nitro plugins register tools at start-up; `execute-tool.ts` runs them.
 */
import type { ValidateFunction } from 'ajv'
import type { z } from 'zod'
import {
  assertValidToolName,
  compileArgumentsValidator,
  releaseArgumentsValidator,
  toJsonSchemaParameters,
} from './tool-schema'
import { TOOL_RUNTIMES, type RegisteredServerTool, type RegisterServerToolOptions, type ServerToolDefinition, type ServerToolHandler, type ToolRuntime } from './tool-types'
import type { OpenRouterToolDefinition } from '../openrouter/types'
import { TOOL_CAPABILITIES, type ToolCapability } from '../../../shared/types/tool'

/** Default per-call limit when neither the tool nor the configuration sets one. */
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000

/** Largest delay setTimeout honours; longer limits would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647

/** A registered tool with its compiled argument checks. */
export interface RegistryEntry {
  tool: RegisteredServerTool
  validate: ValidateFunction
  /** Present for zod-defined tools: refinements and transforms JSON Schema cannot express. */
  zodSchema?: z.ZodType
}

const registry = new Map<string, RegistryEntry>()
let defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS
const changeListeners = new Set<() => void>()

/**
 * Calls `listener` after every registration, replacement or removal (synchronously: listeners
 * that do work debounce it). Returns the idempotent removal.
 */
export function onServerToolsChanged(listener: () => void): () => void {
  changeListeners.add(listener)
  return () => {
    changeListeners.delete(listener)
  }
}

function notifyChanged(): void {
  for (const listener of changeListeners) {
    try {
      listener()
    } catch {
      // A listener's failure is its own; the registry change stands.
    }
  }
}

/** The entry of `name` with its validators (for the executor). */
export function getToolEntry(name: string): RegistryEntry | undefined {
  return registry.get(name)
}

/** The per-call limit for tools that set none. */
export function defaultToolTimeoutMs(): number {
  return defaultTimeoutMs
}

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
    needsApproval: options.needsApproval ?? definition.needsApproval ?? false,
    handler: handler as ServerToolHandler<any>,
    source: options.source,
    unavailable: options.unavailable,
    requiresCredentials: credentialNeeds(name, options.requiresCredentials ?? definition.requiresCredentials),
    capabilities: capabilitiesOf(name, definition.capabilities),
    ...(options.app ? { app: options.app } : {}),
    ...(options.groups?.length ? { groups: [...options.groups] } : {}),
  })
  const isZod = typeof rawParameters === 'object' && rawParameters !== null && '_zod' in rawParameters
  registry.set(name, { tool, validate, zodSchema: isZod ? (rawParameters as z.ZodType) : undefined })
  notifyChanged()
  return tool
}

function capabilitiesOf(name: string, capabilities: unknown): ToolCapability[] {
  if (capabilities === undefined) return []
  if (!Array.isArray(capabilities) || !capabilities.every(capability => TOOL_CAPABILITIES.includes(capability))) {
    throw new TypeError(`Tool "${name}": capabilities must be a list of ${TOOL_CAPABILITIES.join(', ')}, got ${JSON.stringify(capabilities)}.`)
  }
  return [...new Set(capabilities as ToolCapability[])]
}

/** A credential need: `service` or `service/key`, each 1-40 lowercase letters, digits, `_` or `-`. */
export const CREDENTIAL_NEED = /^[a-z0-9_-]{1,40}(?:\/[a-z0-9_-]{1,40})?$/

function credentialNeeds(name: string, needs: unknown): string[] {
  if (needs === undefined) return []
  if (!Array.isArray(needs) || needs.length > 20 || !needs.every(need => typeof need === 'string' && CREDENTIAL_NEED.test(need))) {
    throw new TypeError(`Tool "${name}": requiresCredentials must be a list of at most 20 "service" or "service/key" names (lowercase letters, digits, _ and -), got ${JSON.stringify(needs)}.`)
  }
  return [...new Set(needs as string[])]
}

/** Removes a tool; returns whether one was registered under that name. */
export function unregisterServerTool(name: string): boolean {
  const entry = registry.get(name)
  if (!entry) return false
  releaseArgumentsValidator(entry.tool.parameters)
  registry.delete(name)
  notifyChanged()
  return true
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
 * With `names`, only those tools (unknown names are ignored). Client-only tools, and tools whose
 * source is unavailable right now (an MCP server that is down), are never offered.
 */
export function getEnabledDefinitions(names?: readonly string[]): OpenRouterToolDefinition[] {
  const wanted = names ? new Set(names) : null
  return listServerTools()
    .filter(tool => tool.enabled && tool.runtime !== 'client' && (!wanted || wanted.has(tool.name)) && tool.unavailable?.() === undefined)
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
  notifyChanged()
}
