import { z } from 'zod'
import { MAX_STREAM_BODY_BYTES, modelRequestFields, streamRequestSchema } from '../../lib/chat/stream-request-schema'
import { MissingApiKeyError } from '../../utils/chat/chat-endpoint'

/**
 * Streams an answer, with its tool rounds, as server-sent events. Closing the response aborts the
 * upstream request and any running tools. A user's own key travels in `X-OpenRouter-Key`.
 */
export default defineEventHandler(async (event) => {
  const length = Number(getHeader(event, 'content-length') ?? 0)
  if (length > MAX_STREAM_BODY_BYTES) {
    throw createError({ statusCode: 413, statusMessage: `Request body is over ${MAX_STREAM_BODY_BYTES / 1024} KiB; send fewer or shorter messages.` })
  }
  const body = await readValidatedBody(event, raw => streamRequestSchema.safeParse(raw))
  if (!body.success) {
    throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}`, data: { issues: body.error.issues } })
  }
  const request = body.data
  if (request._background) {
    throw createError({ statusCode: 501, statusMessage: 'Background jobs are not available on this server yet; send the request without _background to stream the answer.' })
  }

  const config = useServerConfig(event)
  let endpoint
  try {
    endpoint = resolveChatEndpoint(request.model, config, getHeader(event, 'x-openrouter-key')?.trim() || undefined)
  } catch (error) {
    if (error instanceof MissingApiKeyError) throw createError({ statusCode: 400, statusMessage: error.message })
    throw error
  }

  const stream = createEventStream(event)
  const controller = new AbortController()
  stream.onClosed(() => controller.abort())
  const send = (name: string, data: unknown) => void stream.push({ event: name, data: JSON.stringify(data) })
  const { toolExecution } = config.backgroundJobs

  void executeToolLoop({
    jobId: '',
    userId: '',
    threadId: request._threadId ?? '',
    model: request.model,
    initialMessages: request.messages,
    endpoint,
    client: chatClientOptions(config),
    request: modelRequestFields(request),
    toolNames: request._tools,
    toolsEnabled: toolExecution.enabled,
    maxRounds: toolExecution.maxRounds,
    maxToolsPerRound: toolExecution.maxToolsPerRound,
    roundTimeoutMs: toolExecution.roundTimeoutMs,
    signal: controller.signal,
    callbacks: {
      onTextDelta: text => send('text-delta', { text }),
      onReasoningDelta: text => send('reasoning-delta', { text }),
      onToolCallStart: call => send('tool-call', { ...call, status: 'running' }),
      onToolCallFinish: call => send('tool-call', call),
      onRoundFinish: round => send('round-finish', { round: round.round, finishReason: round.finishReason }),
    },
  }).then((result) => {
    send('done', {
      finishReason: result.finishReason,
      totalRounds: result.totalRounds,
      totalToolCalls: result.totalToolCalls,
      usage: result.usage,
      error: result.error?.toJSON(),
    })
  }).finally(() => stream.close())

  return stream.send()
})
