/**
 * The multi-round tool loop: stream a model round, run the tools it asked for through the server
 * registry, feed the results back, and repeat until the model answers or a limit is hit.
 * Plain Node module (explicit imports) so it can be driven against the fake upstream in tests.
 */
import { runToolCalls, type ToolCallRecord } from '../tools/run-tool-calls'
import { streamChatCompletion } from '../openrouter/chat-client'
import { formatDuration, OpenRouterError } from '../openrouter/errors'
import type { ChatCompletionRequest, ChatMessage, ChatToolCall, FinishReason, ReasoningDetail, StreamedToolCall, Usage } from '../openrouter/types'
import type { AssistantMessage, ToolExecutionLoopParams, ToolExecutionLoopResult, ToolLoopFinishReason, ToolRoundResult } from './tool-loop-types'
import { getEnabledDefinitions, getServerTool, whenServerToolsReady } from '../tools/registry'
import { approvalNeeded, type ToolAccessCheck } from '../tools/policy/tool-policy'
import { followSignal } from '../follow-signal'
import { answerFindTools, FIND_TOOLS, selectOfferedTools } from './tool-selection'
import type { JsonSchemaObject, OpenRouterToolDefinition } from '../tools/tool-types'
import type { ClientToolDeclaration } from '../../../shared/types/tool'

export type { ToolCallRecord, ToolCallStatus } from '../tools/run-tool-calls'
export type { InterruptedToolRound, ToolExecutionLoopParams, ToolExecutionLoopResult, ToolLoopCallbacks, ToolLoopFinishReason, ToolLoopResumeState, ToolRoundResult } from './tool-loop-types'

/** The last user message's text, which ranks the tools offered when there are many. */
function latestUserText(messages: readonly ChatMessage[]): string {
  const last = messages.findLast(message => message.role === 'user')
  if (!last) return ''
  if (typeof last.content === 'string') return last.content
  return last.content.map(part => (typeof part.text === 'string' ? part.text : '')).join(' ')
}

function emptyUsage(): Usage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0 }
}

function addUsage(total: Usage, round: Usage): void {
  for (const key of Object.keys(total) as Array<keyof Usage>) total[key] += round[key]
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

/**
 * Runs the conversation to an answer. Never throws: upstream errors end the loop with
 * `finishReason: 'error'` and `error`, keeping what was streamed; failing tools are fed back to the
 * model as results. After `maxRounds` tool rounds, one last request with `tool_choice: 'none'` makes
 * the model answer, and the loop reports `tool_limit`.
 */
export async function executeToolLoop(params: ToolExecutionLoopParams): Promise<ToolExecutionLoopResult> {
  const maxRounds = params.maxRounds ?? 10
  const maxToolsPerRound = params.maxToolsPerRound ?? 20
  const roundTimeoutMs = params.roundTimeoutMs ?? 120_000
  const callbacks = params.callbacks ?? {}

  await whenServerToolsReady()
  // The tool set is read again before every model request, so a tool added (or an MCP server
  // back) between rounds is offered from the next one, and one withdrawn is no longer offered.
  // Past `maxOfferedTools`, the most relevant are offered with `find_tools` (tool-selection.ts).
  // The tool policy is read again before every request too: what the principal may not use is never offered.
  let access: ToolAccessCheck | undefined
  const denial = (name: string) => access?.({ name, source: getServerTool(name)?.source })
  const clientTools = (params.clientTools ?? []).map(clientToolDefinition)
  const browserTools = new Set(clientTools.map(tool => tool.function.name))
  const enabledTools = () => params.toolsEnabled === false ? [] : [...getEnabledDefinitions(params.toolNames), ...clientTools].filter(tool => denial(tool.function.name) === undefined)
  const needsApproval = (name: string) => approvalNeeded(name, access)
  const found = new Set<string>()
  const context = latestUserText(params.initialMessages)
  const currentTools = () => selectOfferedTools(enabledTools(), { maxOffered: params.maxOfferedTools ?? 40, context, found })
  const localTools = new Map([[FIND_TOOLS, (argumentsJson: string) => answerFindTools(enabledTools(), argumentsJson, found)]])
  access = await params.toolAccess?.()
  let tools = currentTools()
  let offered = new Set(tools.map(tool => tool.function.name))

  const messages: ChatMessage[] = [...params.initialMessages]
  const toolRounds: ToolRoundResult[] = []
  const usage = emptyUsage()
  const toolRoundsBefore = params.resume?.toolRounds ?? 0
  let finalContent = params.resume?.content ?? ''
  let reasoning = params.resume?.reasoning ?? ''
  let totalRounds = params.resume?.rounds ?? 0
  let totalToolCalls = 0

  const finish = (finishReason: ToolLoopFinishReason, error?: OpenRouterError): ToolExecutionLoopResult =>
    ({ finalContent, reasoning, totalRounds, totalToolCalls, toolRounds, finishReason, usage, error, messages })

  /** Runs one round's calls through the registry, reporting each start and finish. */
  const runRound = async (round: number, calls: readonly StreamedToolCall[], signal: AbortSignal | undefined, holdDeadline?: () => () => void) => runToolCalls(calls, {
    round,
    browserTools,
    needsApproval,
    people: params.people,
    holdDeadline,
    offered,
    maxToolsPerRound,
    concurrency: params.toolConcurrency ?? 5,
    context: { userId: params.userId, threadId: params.threadId, jobId: params.jobId, credentials: await params.credentials?.() },
    denial: name => (localTools.has(name) ? undefined : denial(name)),
    localTools,
    signal,
    beforeExecute: callbacks.beforeToolExecute ? call => callbacks.beforeToolExecute!({ round, call }) : undefined,
    onStart: (call, callStartedAt) => callbacks.onToolCallStart?.({ round, id: call.id, name: call.name, arguments: call.arguments, startedAt: callStartedAt }),
    onFinish: record => callbacks.onToolCallFinish?.({ ...record, round }),
  })

  /** Adds a round's assistant turn and tool results to the conversation, and reports the round. */
  const completeToolRound = (round: number, assistant: AssistantMessage, records: ToolCallRecord[], executed: number, startedAt: number) => {
    messages.push(assistant)
    for (const record of records) messages.push({ role: 'tool', tool_call_id: record.id, content: record.result })
    toolRounds.push({ round, toolCalls: records, totalExecutionMs: Date.now() - startedAt })
    totalToolCalls += executed
    callbacks.onRoundFinish?.({ round, finishReason: 'tool_calls', toolCalls: records, messages })
  }

  const interrupted = params.resume?.interruptedRound
  if (interrupted) {
    const { round, assistant, calls, settled } = interrupted
    const startedAt = Date.now()
    const rerun = await runRound(round, calls.filter(call => !settled.has(call.id)), params.signal)
    totalRounds = Math.max(totalRounds, round)
    completeToolRound(round, assistant, calls.map(call => settled.get(call.id) ?? rerun.find(record => record.id === call.id)!), rerun.length, startedAt)
    if (params.signal?.aborted) return finish('aborted')
  }

  while (true) {
    const round = ++totalRounds
    access = await params.toolAccess?.()
    tools = currentTools()
    offered = new Set(tools.map(tool => tool.function.name))
    const forceAnswer = toolRoundsBefore + toolRounds.length >= maxRounds
    const request: ChatCompletionRequest = {
      ...params.request,
      model: params.model,
      messages: params.expandMessages ? await params.expandMessages(messages) : messages,
      stream: true,
      usage: { include: true },
    }
    // Tools go out again on every request that carries tool results, even when none may be called.
    if (tools.length > 0) request.tools = tools
    if (forceAnswer) request.tool_choice = 'none'

    const deadline = roundSignal(params.signal, roundTimeoutMs)
    try {
      let roundText = ''
      let roundError: OpenRouterError | undefined
      let roundFinish: FinishReason = 'stop'
      let reasoningDetails: ReasoningDetail[] | undefined
      const calls: StreamedToolCall[] = []

      for await (const event of streamChatCompletion(params.endpoint, request, { ...params.client, signal: deadline.signal })) {
        switch (event.type) {
          case 'text-delta': {
            // A new round's text starts on its own paragraph, in the stream as in the result.
            const text = roundText === '' && finalContent !== '' ? `\n\n${event.text}` : event.text
            roundText += event.text
            finalContent += text
            callbacks.onTextDelta?.(text, { round })
            break
          }
          case 'reasoning-delta':
            reasoning += event.text
            callbacks.onReasoningDelta?.(event.text, { round })
            break
          case 'reasoning-details':
            reasoningDetails = event.details
            break
          case 'tool-call':
            calls.push(event.toolCall)
            break
          case 'usage':
            addUsage(usage, event.usage)
            callbacks.onUsage?.(event.usage, { round })
            break
          case 'error':
            roundError = event.error
            break
          case 'finish':
            roundFinish = event.finishReason
            break
        }
      }

      if (params.signal?.aborted) return finish('aborted')
      if (deadline.timedOut()) {
        return finish('error', roundTimeoutError(round, roundTimeoutMs))
      }
      if (roundError) return finish('error', roundError)

      const assistantTurn: AssistantMessage = { role: 'assistant', content: roundText || null }
      if (reasoningDetails) assistantTurn.reasoning_details = reasoningDetails

      if (roundFinish !== 'tool_calls' || calls.length === 0 || forceAnswer) {
        messages.push(assistantTurn)
        callbacks.onRoundFinish?.({ round, finishReason: roundFinish, toolCalls: [], messages })
        if (forceAnswer) return finish('tool_limit')
        return finish(roundFinish === 'length' || roundFinish === 'content_filter' ? roundFinish : 'stop')
      }

      assistantTurn.tool_calls = calls.map(toWireToolCall)
      await callbacks.onToolRoundStart?.({ round, assistant: assistantTurn, calls })
      const startedAt = Date.now()
      const records = await runRound(round, calls, deadline.signal, deadline.hold)
      completeToolRound(round, assistantTurn, records, records.length, startedAt)

      if (params.signal?.aborted) return finish('aborted')
      if (deadline.timedOut()) {
        return finish('error', roundTimeoutError(round, roundTimeoutMs))
      }
    } finally {
      deadline.dispose()
    }
  }
}
