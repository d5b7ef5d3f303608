import type { InputCodeBlock } from '../../../shared/types/input-request'
import type { z } from 'zod'
import type { JsonSchemaObject } from '../openrouter/types'
import type { ToolCapability } from '../../../shared/types/tool'
import type { McpAppLink } from './mcp/apps'

/** Where a tool may run: only in the browser, only on the server, or on either. */
export type ToolRuntime = 'client' | 'server' | 'hybrid'

export const TOOL_RUNTIMES: readonly ToolRuntime[] = ['client', 'server', 'hybrid']

/** Arguments schema in either form a tool author may write it. */
export type ToolParameters = JsonSchemaObject | z.ZodObject

/**
 * A tool definition in OpenAI's function shape. `parameters` may be a JSON Schema
 * or a zod object schema (converted with `z.toJSONSchema` at registration).
 */
export interface ServerToolDefinition {
  type: 'function'
  function: {
    name: string
    description?: string
    parameters?: ToolParameters
  }
  /** Where this tool may run; `registerServerTool`'s `options.runtime` wins over it. */
  runtime?: ToolRuntime
  /** Disabled tools are neither offered to models nor executed. Default true. */
  enabled?: boolean
  /**
   * Calling it twice with the same arguments has no extra effect (a lookup, a calculation).
   * After a crash, a call that may have been running is re-run only when this is true; otherwise
   * the model is told its outcome is unknown. Default false.
   */
  idempotent?: boolean
  /**
   * Credentials it needs: a service (`'github'`: any key of it) or a service and key
   * (`'github/token'`). A call whose user has none set ends with a tool error saying what to set
   * where, without running the handler. `registerServerTool`'s option wins over it.
   */
  requiresCredentials?: string[]
  /**
   * A call waits until its user approves it (from any tab or device, with the arguments shown); a
   * denial or no answer in time goes back to the model as a tool error. Default false; a tool
   * policy rule with `effect: 'approve'` can require it too. `registerServerTool`'s option wins.
   */
  needsApproval?: boolean
  /** What it reaches beyond answering (internet, workspace, code, subagents), for policy rules. */
  capabilities?: ToolCapability[]
}

/** The credentials a call may use: its user's, else the server-wide ones; never another user's. */
export interface ToolCredentials {
  /** The value of `key` of `service` (e.g. `get('github', 'token')`), or undefined. */
  get(service: string, key: string): string | undefined
  /** Whether any key of `service` is set. */
  has(service: string): boolean
}

/**
 * A question a tool asks the person it runs for (an MCP server's elicitation): a form from a JSON
 * Schema, or a page to open. `timeoutMs` bounds the wait below the job's own (the tool's caller
 * gives up sooner).
 */
export interface ToolQuestion {
  message: string
  /** What the person approves, each shown exactly in a code view of its own (see JobInputRequest). */
  code?: InputCodeBlock[]
  /** A model's words about it, shown as such (one line, cut). */
  modelWords?: string
  schema?: Record<string, unknown>
  url?: string
  /** Who asks, for the person (`mcp:<server>`). */
  origin?: string
  timeoutMs?: number
}

/** The person's answer; `cancel` also when nobody answered in time or the job stopped. */
export type ToolQuestionAnswer = { action: 'accept', content?: Record<string, unknown> } | { action: 'decline' | 'cancel' }

/** What a handler knows about the call it serves. */
export interface ToolExecutionContext {
  userId: string
  threadId: string
  jobId: string
  /** Aborted when the call times out or the job is aborted; pass it to fetch() and friends. */
  signal?: AbortSignal
  /** The credentials of the call's user (none set: every `get` is undefined). */
  credentials: ToolCredentials
  /** Asks the person the call runs for (a job's user, from any tab); absent when nobody can answer. */
  askUser?: (question: ToolQuestion) => Promise<ToolQuestionAnswer>
  /** The model's id for this call (stable across a resume of the job). */
  toolCallId?: string
  /** The workspace the call works in, when it is not its conversation's or run's own (a subagent shares its parent's). */
  workspaceId?: string
  /** The knowledge bases the call searches, when not its conversation's: a workflow agent step's own. */
  knowledgeBaseIds?: readonly string[]
  /**
   * The server tools the calling agent may use (what its job asked for, enabled, and allowed by
   * the person's policy as the loop last read it): what it can hand on, and no more (a subagent).
   */
  availableTools?: readonly string[]
  /**
   * Stops the round's time limit while the call waits on something that is not the tool's own
   * work (a subagent's whole run); call what it returns when the wait ends.
   */
  holdRoundDeadline?: () => () => void
}

/**
 * A server tool handler. Return a string, or any JSON-serialisable value
 * (it is `JSON.stringify`'d); throw to report an error to the model.
 */
export type ServerToolHandler<TArgs = Record<string, unknown>> = (
  args: TArgs,
  context: ToolExecutionContext,
) => unknown

/** Where a tool comes from: built into the app, a tool file, an MCP server, or the dynamic tools directory. */
export interface ToolSource {
  kind: 'builtin' | 'file' | 'mcp' | 'dynamic'
  /** The MCP server's name, or the file's path. */
  name?: string
}

/** Options of `registerServerTool`. */
export interface RegisterServerToolOptions {
  /** Where the tool comes from (shown by `GET /api/tools`). */
  source?: ToolSource
  /**
   * Why the tool cannot run right now (its MCP server is down), or undefined when it can. An
   * unavailable tool is not offered to models, and a call to it gets this reason as its error.
   */
  unavailable?: () => string | undefined
  runtime?: ToolRuntime
  /** Per-call time limit; defaults to the registry default (10000 ms unless configured). */
  timeoutMs?: number
  /** Replace a tool already registered under the same name instead of throwing. */
  override?: boolean
  /** Overrides `definition.idempotent`. */
  idempotent?: boolean
  /** Overrides `definition.requiresCredentials`. */
  requiresCredentials?: string[]
  /** Overrides `definition.needsApproval`. */
  needsApproval?: boolean
  /** An MCP tool's MCP Apps link: its page, and whether the model, the page or both may call it. */
  app?: McpAppLink
  /** The groups it is for (its MCP server's `groups`); absent: everyone the policy lets. */
  groups?: readonly string[]
}

/**
 * Thrown by a handler whose tool could not be reached at all, so nothing ran (a server that is
 * down): the call ends `unavailable` with this message rather than `execution_failed`.
 */
export class ToolUnavailableError extends Error {
  override name = 'ToolUnavailableError'
}

/** Why a tool call produced no result. Lets callers show "timed out" apart from "failed". */
export type ToolErrorCode =
  | 'not_registered'
  | 'disabled'
  | 'client_only'
  | 'invalid_arguments'
  | 'timeout'
  | 'aborted'
  | 'execution_failed'
  | 'invalid_result'
  | 'unavailable'
  | 'credentials_missing'

/** The outcome of `executeServerTool`; it never throws. */
export interface ToolExecutionResult {
  result: string | null
  toolName: string
  timedOut: boolean
  error?: string
  errorCode?: ToolErrorCode
  runtime?: ToolRuntime
  executionTimeMs: number
}

/** A tool as the registry holds it: normalised definition, compiled validator, handler. */
export interface RegisteredServerTool {
  name: string
  description: string
  /** Plain JSON Schema, whatever form the author used. */
  parameters: JsonSchemaObject
  runtime: ToolRuntime
  enabled: boolean
  /** Explicit per-tool limit; `undefined` means the registry default at call time. */
  timeoutMs?: number
  /** Safe to re-run after a crash interrupted it. */
  idempotent: boolean
  /** Each call waits for its user's approval. */
  needsApproval: boolean
  handler: ServerToolHandler<any>
  source?: ToolSource
  /** See `RegisterServerToolOptions.unavailable`. */
  unavailable?: () => string | undefined
  /** Credentials it needs (`service` or `service/key`); empty when none. */
  requiresCredentials: string[]
  /** What it reaches beyond answering; empty when nothing. */
  capabilities: ToolCapability[]
  /** See `RegisterServerToolOptions.app`. */
  app?: McpAppLink
  /** See `RegisterServerToolOptions.groups`. */
  groups?: readonly string[]
}
