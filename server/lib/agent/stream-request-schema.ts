import { z } from 'zod'
import { clientToolsSchema } from '../tools/client-tools'

/** Largest request body accepted by the chat routes (1 MiB). */
export const MAX_STREAM_BODY_BYTES = 1024 * 1024

const text = z.string().max(200_000)

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: text }),
  z.object({ role: z.literal('user'), content: z.union([text, z.array(z.record(z.string(), z.unknown())).max(50)]) }),
  z.object({
    role: z.literal('assistant'),
    content: text.nullable(),
    tool_calls: z.array(z.object({
      id: z.string().min(1),
      type: z.literal('function'),
      function: z.object({ name: z.string().min(1), arguments: z.string() }),
    })).optional(),
    reasoning_details: z.array(z.object({ type: z.string() }).catchall(z.unknown())).max(100).optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: text }),
])

/**
 * `POST /api/openrouter/stream`: an OpenRouter chat-completions body (the fields we pass on) plus
 * control fields starting with `_`. Unknown fields are dropped, not forwarded.
 */
export const streamRequestSchema = z.object({
  model: z.string().trim().min(1, 'choose a model').max(200),
  messages: z.array(messageSchema).min(1, 'send at least one message').max(500),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) })]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  max_tokens: z.number().int().positive().max(1_000_000).optional(),
  reasoning: z.object({ effort: z.enum(['minimal', 'low', 'medium', 'high']).optional(), max_tokens: z.number().int().positive().optional(), exclude: z.boolean().optional() }).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  repetition_penalty: z.number().min(0).max(2).optional(),
  seed: z.number().int().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).optional(),
  /** Run as a background job and answer `{ jobId }` at once. */
  _background: z.boolean().optional(),
  _threadId: z.string().max(200).optional(),
  _messageId: z.string().max(200).optional(),
  /** Names of server tools to offer; default every enabled tool. */
  _tools: z.array(z.string().max(64)).max(100).optional(),
  /** Tools this user's browser runs for the job (see tools/client-tools.ts). */
  _clientTools: clientToolsSchema.optional(),
})

export type StreamRequest = z.infer<typeof streamRequestSchema>

/** The pass-through part of a validated body: what goes to the model besides model and messages. */
export function modelRequestFields(body: StreamRequest) {
  const { model: _model, messages: _messages, _background, _threadId, _messageId, _tools, _clientTools, ...fields } = body
  return fields
}
