import { randomUUID } from 'node:crypto'
import {
  estimateTokens,
  finishChunk,
  roleChunk,
  SSE_DONE,
  SSE_KEEP_ALIVE,
  sseData,
  textChunk,
  toolCallArgumentsChunk,
  toolCallOpenChunk,
  usageChunk,
  type ChunkMeta,
} from '../../openrouter/chunks'
import type { ChatCompletionRequest } from '../../openrouter/types'
import { DEMO_MODEL_ID, DEMO_MODEL_NAME, planDemoReply } from './demo-planner'

export interface DemoStreamOptions {
  /** Pause between streamed tokens; 0 streams as fast as possible (tests). */
  tokenDelayMs: number
}

/** Splits text into word-sized tokens that keep their spacing, as models stream them. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+|\s+/g) ?? []
}

function sseParts(request: ChatCompletionRequest): string[] {
  const meta: ChunkMeta = { id: `gen-demo-${randomUUID()}`, model: DEMO_MODEL_ID, created: Math.floor(Date.now() / 1000), provider: 'OR3 demo' }
  const plan = planDemoReply(request)
  const promptTokens = estimateTokens(JSON.stringify(request.messages ?? []))
  const parts = [SSE_KEEP_ALIVE, sseData(roleChunk(meta))]
  let completion = ''
  if (plan.kind === 'text') {
    for (const token of tokenize(plan.text)) parts.push(sseData(textChunk(meta, token)))
    completion = plan.text
    parts.push(sseData(finishChunk(meta, 'stop')))
  } else {
    plan.calls.forEach((call, index) => {
      const args = JSON.stringify(call.arguments)
      parts.push(sseData(toolCallOpenChunk(meta, index, `call_demo_${randomUUID().replaceAll('-', '').slice(0, 16)}`, call.name)))
      for (let at = 0; at < args.length; at += 8) parts.push(sseData(toolCallArgumentsChunk(meta, index, args.slice(at, at + 8))))
      completion += args
    })
    parts.push(sseData(finishChunk(meta, 'tool_calls')))
  }
  parts.push(sseData(usageChunk(meta, { prompt: promptTokens, completion: estimateTokens(completion) })), SSE_DONE)
  return parts
}

/**
 * The demo model's answer to a chat-completions request, as a streamed Response in OpenRouter's
 * exact wire format. Cancelling the body (the client going away) stops it at once.
 */
export function createDemoCompletionResponse(request: ChatCompletionRequest, options: DemoStreamOptions): Response {
  const parts = sseParts(request)
  const encoder = new TextEncoder()
  let timer: ReturnType<typeof setTimeout> | undefined
  let index = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index >= parts.length) return controller.close()
      const part = parts[index++]!
      // Pace the text and argument tokens; the keep-alive and role chunks go out at once.
      const delay = index > 2 ? options.tokenDelayMs : 0
      if (delay === 0) return controller.enqueue(encoder.encode(part))
      return new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          controller.enqueue(encoder.encode(part))
          resolve()
        }, delay)
      })
    },
    cancel() {
      clearTimeout(timer)
      index = parts.length
    },
  }, { highWaterMark: 0 })
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Generation-Id': `gen-demo-${randomUUID()}` },
  })
}

/** `GET /models` of the demo endpoint, in OpenRouter's shape. */
export function demoModelList() {
  return {
    data: [{
      id: DEMO_MODEL_ID,
      name: DEMO_MODEL_NAME,
      description: 'Runs inside this app with no key and no network: answers with a few rules and calls the built-in tools.',
      context_length: 8192,
      pricing: { prompt: '0', completion: '0' },
      supported_parameters: ['tools', 'tool_choice', 'max_tokens'],
    }],
  }
}
