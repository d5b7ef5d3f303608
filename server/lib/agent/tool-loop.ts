/**
 * The multi-round tool loop: stream a model round, run the tools it asked for through the server
 * registry, feed the results back, and repeat until the model answers or a limit is hit.
 * Plain Node module (explicit imports) so it can be driven against the fake upstream in tests.
 */
import { runToolCalls, type ToolCallRecord } from '../tools/run-tool-calls'
import { streamChatCompletion } from '../openrouter/chat-client'
import { formatDuration, OpenRouterError } from '../openrouter/errors'
import { addUsage, emptyUsage } from '../openrouter/usage'
import type { ChatCompletionRequest, ChatMessage, ChatToolCall, FinishReason, ReasoningDetail, StreamedToolCall } from '../openrouter/types'
import type { AssistantMessage, InterruptedToolRound, ToolExecutionLoopParams, ToolExecutionLoopResult, ToolLoopCallbacks, ToolLoopFinishReason, ToolRoundResult } from './tool-loop-types'
import { processTools } from '../tools/run-tools'
import { approvalNeeded, policyToolNamed, type ToolAccessCheck } from '../tools/policy/tool-policy'
import { followSignal } from '../follow-signal'
import { answerFindTools, FIND_TOOLS, selectOfferedTools } from './tool-selection'
import type { JsonSchemaObject, OpenRouterToolDefinition } from '../openrouter/types'
import type { ClientToolDeclaration } from '../../../shared/types/tool'

export type { ToolCallRecord, ToolCallStatus } from '../tools/run-tool-calls'
export type { InterruptedToolRound, LoopSteer, ToolExecutionLoopParams, ToolExecutionLoopResult, ToolLoopCallbacks, ToolLoopFinishReason, ToolLoopResumeState, ToolRoundResult } from './tool-loop-types'

/** The last user message's text, which ranks the tools offered when there are many. */
function latestUserText(messages: readonly ChatMessage[]): string {
  const last = messages.findLast(message => message.role === 'user')
  if (!last) return ''
  if (typeof last.content === 'string') return last.content
  return last.content.map(part => (typeof part.text === 'string' ? part.text : '')).join(' ')
}

function toWireToolCall(call: StreamedToolCall): ChatToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }
}

function roundTimeoutError(round: number, roundTimeoutMs: number): OpenRouterError {
  return new OpenRouterError({ kind: 'timeout', message: `Round ${round} took longer than ${formatDuration(roundTimeoutMs)} and was stopped.` })
}

/**
 * A signal that aborts with the caller's signal or when the round's time is up. `hold()` stops the
 * clock while a call waits for a person (their minutes are not the round's); it runs on with the
 * time that was left once the last hold is released.
 */
function roundSignal(parent: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal, timedOut: () => boolean, hold: () => () => void, dispose: () => void } {
  const { controller, dispose: stopFollowing } = followSignal(parent)
  let expired = false
  let remaining = timeoutMs
  let startedAt = Date.now()
  let holds = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = () => {
    startedAt = Date.now()
    timer = setTimeout(() => {
      expired = true
      controller.abort(new DOMException('Round timed out', 'TimeoutError'))
    }, Math.max(0, remaining))
  }
  arm()
  return {
    signal: controller.signal,
    timedOut: () => expired,
    hold: () => {
      if (holds++ === 0 && !expired) {
        clearTimeout(timer)
        remaining -= Date.now() - startedAt
      }
      let released = false
      return () => {
        if (released) return
        released = true
        if (--holds === 0 && !expired && !controller.signal.aborted) arm()
      }
    },
    dispose: () => {
      clearTimeout(timer)
      stopFollowing()
    },
  }
}

/** A browser tool as the model is offered it. */
function clientToolDefinition(tool: ClientToolDeclaration): OpenRouterToolDefinition {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: structuredClone(tool.parameters) as JsonSchemaObject } }
}

/** The offered tool set, read again before every model request (see `ToolLoop`). */
class OfferedTools {
  access: ToolAccessCheck | undefined
  tools: OpenRouterToolDefinition[] = []
  offered = new Set<string>()
  readonly browserTools: Set<string>
  readonly localTools: Map<string, (argumentsJson: string) => string>
  private readonly clientTools: OpenRouterToolDefinition[]
  private readonly found = new Set<string>()
  private readonly context: string

  constructor(private readonly params: ToolExecutionLoopParams) {
    this.clientTools = (params.clientTools ?? []).map(clientToolDefinition)
    this.browserTools = new Set(this.clientTools.map(tool => tool.function.name))
    this.context = latestUserText(params.initialMessages)
    this.localTools = new Map([[FIND_TOOLS, (argumentsJson: string) => answerFindTools(this.enabled(), argumentsJson, this.found)]])
  }

  /** Why the principal may not use `name`, if they may not (the policy as last read). */
  denial(name: string): string | undefined {
    return this.access?.(policyToolNamed(name, this.registry.get))
  }

  /** Whether a call to `name` waits for its user's approval (the tool asks, or the policy as last read does). */
  needsApproval(name: string): boolean {
    return approvalNeeded(name, this.access, this.registry.get)
  }

  /** The registry the loop's tools come from. */
  get registry() {
    return this.params.tools ?? processTools
  }

  /** Reads the policy and the registry again: what the next request offers. */
  async refresh(): Promise<void> {
    this.access = await this.params.toolAccess?.()
    this.tools = selectOfferedTools(this.enabled(), { maxOffered: this.params.maxOfferedTools ?? 40, context: this.context, found: this.found })
    this.offered = new Set(this.tools.map(tool => tool.function.name))
  }

  /** The server tools this loop may call (not only those offered now: `find_tools` reaches the rest). */
  serverToolNames(): string[] {
    return this.enabled().map(tool => tool.function.name).filter(name => !this.browserTools.has(name))
  }

  private enabled(): OpenRouterToolDefinition[] {
    if (this.params.toolsEnabled === false) return []
    return [...this.registry.definitions(this.params.toolNames), ...this.clientTools].filter(tool => this.denial(tool.function.name) === undefined)
  }
}

/** What one model request streamed. */
interface StreamedRound {
  text: string
  error?: OpenRouterError
  finish: FinishReason
  reasoningDetails?: ReasoningDetail[]
  calls: StreamedToolCall[]
}

/**
 * Runs the conversation to an answer. Never throws: upstream errors end the loop with
 * `finishReason: 'error'` and `error`, keeping what was streamed; failing tools are fed back to the
 * model as results. After `maxRounds` tool rounds, one last request with `tool_choice: 'none'` makes
 * the model answer, and the loop reports `tool_limit`.
 */
export async function executeToolLoop(params: ToolExecutionLoopParams): Promise<ToolExecutionLoopResult> {
  await (params.tools ?? processTools).ready()
  return new ToolLoop(params).run()
}

/**
 * One loop's state and steps. The tool set is read again before every model request, so a tool
 * added (or an MCP server back) between rounds is offered from the next one, and one withdrawn is
 * no longer offered; so is the tool policy: what the principal may not use is never offered. Past
 * `maxOfferedTools`, the most relevant are offered with `find_tools` (tool-selection.ts).
 */
class ToolLoop {
  private readonly callbacks: ToolLoopCallbacks
  private readonly tools: OfferedTools
  private readonly messages: ChatMessage[]
  private readonly toolRounds: ToolRoundResult[] = []
  private readonly usage = emptyUsage()
  private readonly toolRoundsBefore: number
  private finalContent: string
  private reasoning: string
  private totalRounds: number
  private totalToolCalls = 0

  constructor(private readonly params: ToolExecutionLoopParams) {
    this.callbacks = params.callbacks ?? {}
    this.tools = new OfferedTools(params)
    this.messages = [...params.initialMessages]
    this.toolRoundsBefore = params.resume?.toolRounds ?? 0
    this.finalContent = params.resume?.content ?? ''
    this.reasoning = params.resume?.reasoning ?? ''
    this.totalRounds = params.resume?.rounds ?? 0
  }

  async run(): Promise<ToolExecutionLoopResult> {
    await this.tools.refresh()
    if (this.params.resume?.interruptedRound) {
      await this.finishInterrupted(this.params.resume.interruptedRound)
      if (this.params.signal?.aborted) return this.finish('aborted')
    }
    while (true) {
      const ended = await this.round(++this.totalRounds)
      if (ended) return ended
    }
  }

  private finish(finishReason: ToolLoopFinishReason, error?: OpenRouterError): ToolExecutionLoopResult {
    const { finalContent, reasoning, totalRounds, totalToolCalls, toolRounds, usage, messages } = this
    return { finalContent, reasoning, totalRounds, totalToolCalls, toolRounds, finishReason, usage, error, messages }
  }

  /** Finishes a round a stop cut short: settled calls keep their record, the others run. */
  private async finishInterrupted({ round, assistant, calls, settled }: InterruptedToolRound): Promise<void> {
    const startedAt = Date.now()
    const rerun = await this.runCalls(round, calls.filter(call => !settled.has(call.id)), this.params.signal)
    this.totalRounds = Math.max(this.totalRounds, round)
    this.completeToolRound(round, assistant, calls.map(call => settled.get(call.id) ?? rerun.find(record => record.id === call.id)!), rerun.length, startedAt)
  }

  /** One model request and the tools it asks for; the loop's result when it ends here. */
  private async round(round: number): Promise<ToolExecutionLoopResult | undefined> {
    await this.tools.refresh()
    await this.takeSteers(round)
    if (this.params.signal?.aborted) return this.finish('aborted')
    const forceAnswer = this.toolRoundsBefore + this.toolRounds.length >= (this.params.maxRounds ?? 10)
    const request = await this.modelRequest(forceAnswer)
    await this.callbacks.beforeModelRequest?.({ round, request })
    if (this.params.signal?.aborted) return this.finish('aborted')
    const roundTimeoutMs = this.params.roundTimeoutMs ?? 120_000
    const deadline = roundSignal(this.params.signal, roundTimeoutMs)
    try {
      let streamed: StreamedRound | undefined
      try {
        streamed = await this.stream(round, request, deadline.signal)
      } finally {
        const error = deadline.timedOut() ? 'timeout' : streamed?.error?.kind
        this.callbacks.afterModelRequest?.(error ? { round, error } : { round })
      }
      if (this.params.signal?.aborted) return this.finish('aborted')
      if (deadline.timedOut()) return this.finish('error', roundTimeoutError(round, roundTimeoutMs))
      if (streamed.error) return this.finish('error', streamed.error)

      const assistantTurn: AssistantMessage = { role: 'assistant', content: streamed.text || null }
      if (streamed.reasoningDetails) assistantTurn.reasoning_details = streamed.reasoningDetails
      if (streamed.finish !== 'tool_calls' || streamed.calls.length === 0 || forceAnswer) {
        this.messages.push(assistantTurn)
        this.callbacks.onRoundFinish?.({ round, finishReason: streamed.finish, toolCalls: [], messages: this.messages })
        if (forceAnswer) return this.finish('tool_limit')
        return this.finish(streamed.finish === 'length' || streamed.finish === 'content_filter' ? streamed.finish : 'stop')
      }

      assistantTurn.tool_calls = streamed.calls.map(toWireToolCall)
      await this.callbacks.onToolRoundStart?.({ round, assistant: assistantTurn, calls: streamed.calls })
      const startedAt = Date.now()
      const records = await this.runCalls(round, streamed.calls, deadline.signal, deadline.hold)
      this.completeToolRound(round, assistantTurn, records, records.length, startedAt)
      if (this.params.signal?.aborted) return this.finish('aborted')
      if (deadline.timedOut()) return this.finish('error', roundTimeoutError(round, roundTimeoutMs))
      return undefined
    } finally {
      deadline.dispose()
    }
  }

  /** The round boundary: what the person sent the running answer goes in as their turns, recorded before the model reads it. */
  private async takeSteers(round: number): Promise<void> {
    const steers = await this.params.takeSteers?.().catch(() => [])
    if (!steers?.length) return
    for (const steer of steers) this.messages.push({ role: 'user', content: steer.content })
    await this.callbacks.onSteered?.({ round, steers, messages: this.messages })
  }

  /** The next request: the conversation so far (its files expanded) and the tools on offer. */
  private async modelRequest(forceAnswer: boolean): Promise<ChatCompletionRequest> {
    const { params } = this
    const request: ChatCompletionRequest = {
      ...params.request,
      model: params.model,
      messages: params.expandMessages ? await params.expandMessages(this.messages) : this.messages,
      stream: true,
      usage: { include: true },
    }
    // Tools go out again on every request that carries tool results, even when none may be called.
    if (this.tools.tools.length > 0) request.tools = this.tools.tools
    if (forceAnswer) request.tool_choice = 'none'
    return request
  }

  /** Streams one model request, passing its text on as it comes. */
  private async stream(round: number, request: ChatCompletionRequest, signal: AbortSignal): Promise<StreamedRound> {
    const streamed: StreamedRound = { text: '', finish: 'stop', calls: [] }
    for await (const event of streamChatCompletion(this.params.endpoint, request, { ...this.params.client, signal })) {
      switch (event.type) {
        case 'text-delta': {
          // A new round's text starts on its own paragraph, in the stream as in the result.
          const text = streamed.text === '' && this.finalContent !== '' ? `\n\n${event.text}` : event.text
          streamed.text += event.text
          this.finalContent += text
          this.callbacks.onTextDelta?.(text, { round })
          break
        }
        case 'reasoning-delta':
          this.reasoning += event.text
          this.callbacks.onReasoningDelta?.(event.text, { round })
          break
        case 'reasoning-details':
          streamed.reasoningDetails = event.details
          break
        case 'tool-call':
          streamed.calls.push(event.toolCall)
          break
        case 'usage':
          addUsage(this.usage, event.usage)
          this.callbacks.onUsage?.(event.usage, { round })
          break
        case 'error':
          streamed.error = event.error
          break
        case 'finish':
          streamed.finish = event.finishReason
          break
      }
    }
    return streamed
  }

  /** Runs one round's calls through the registry, reporting each start and finish. */
  private async runCalls(round: number, calls: readonly StreamedToolCall[], signal: AbortSignal | undefined, holdDeadline?: () => () => void): Promise<ToolCallRecord[]> {
    const { params, callbacks, tools } = this
    return runToolCalls(calls, {
      round,
      browserTools: tools.browserTools,
      needsApproval: name => tools.needsApproval(name),
      execute: tools.registry.run,
      people: params.people,
      holdDeadline,
      offered: tools.offered,
      maxToolsPerRound: params.maxToolsPerRound ?? 20,
      concurrency: params.toolConcurrency ?? 5,
      context: { userId: params.userId, threadId: params.threadId, jobId: params.jobId, ...(params.workspaceId ? { workspaceId: params.workspaceId } : {}), ...(params.knowledgeBaseIds ? { knowledgeBaseIds: params.knowledgeBaseIds } : {}), credentials: await params.credentials?.(), availableTools: tools.serverToolNames() },
      denial: name => (tools.localTools.has(name) ? undefined : tools.denial(name)),
      localTools: tools.localTools,
      signal,
      beforeExecute: callbacks.beforeToolExecute ? call => callbacks.beforeToolExecute!({ round, call }) : undefined,
      onStart: (call, callStartedAt) => callbacks.onToolCallStart?.({ round, id: call.id, name: call.name, arguments: call.arguments, startedAt: callStartedAt }),
      onFinish: record => callbacks.onToolCallFinish?.({ ...record, round }),
    })
  }

  /** Adds a round's assistant turn and tool results to the conversation, and reports the round. */
  private completeToolRound(round: number, assistant: AssistantMessage, records: ToolCallRecord[], executed: number, startedAt: number): void {
    this.messages.push(assistant)
    for (const record of records) this.messages.push({ role: 'tool', tool_call_id: record.id, content: record.result })
    this.toolRounds.push({ round, toolCalls: records, totalExecutionMs: Date.now() - startedAt })
    this.totalToolCalls += executed
    this.callbacks.onRoundFinish?.({ round, finishReason: 'tool_calls', toolCalls: records, messages: this.messages })
  }
}
