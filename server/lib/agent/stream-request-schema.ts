import { z } from 'zod'
import { clientToolsSchema } from '../tools/client-tools'

/** Largest request body accepted by the chat routes (1 MiB). */
export const MAX_STREAM_BODY_BYTES = 1024 * 1024

const text = z.string().max(200_000)

/** Image types a model is sent inline. */
const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/

/**
 * What a user message may carry, by type and scheme: text, images as data URLs (never a link,
 * which a self-hosted model server might fetch from inside the network), and the app's own stored
 * files by id (`or3_attachment`: read for the job's own user only). Anything else is refused with
 * the part named.
 */
const contentPart = z.union([
  z.object({ type: z.literal('text'), text }).strict(),
  z.object({
    type: z.literal('image_url'),
    image_url: z.object({
      url: z.string().max(900_000).regex(DATA_IMAGE, 'must be a data URL of a PNG, JPEG, GIF or WebP image (data:image/png;base64,…); links are not sent to the model, attach the file instead'),
      detail: z.enum(['auto', 'low', 'high']).optional(),
    }).strict(),
  }).strict(),
  z.object({ type: z.literal('or3_attachment'), id: z.string().min(1).max(200) }).strict(),
], { error: issue => issue.code === 'invalid_union' ? 'must be a text part, an image as a data URL, or a file attached to the conversation (file and audio parts are not accepted; attach files instead)' : undefined })
const contentParts = z.array(contentPart).max(50)

/** A user message's content: text, or a list of parts whose problems are reported at the part. */
const userContent = z.unknown().transform((value, context): string | z.output<typeof contentParts> => {
  if (typeof value !== 'string' && !Array.isArray(value)) {
    context.addIssue({ code: 'custom', message: 'must be text or a list of parts' })
    return z.NEVER
  }
  const parsed = typeof value === 'string' ? text.safeParse(value) : contentParts.safeParse(value)
  if (parsed.success) return parsed.data
  for (const issue of parsed.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path })
  return z.NEVER
})

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: text }),
  z.object({ role: z.literal('user'), content: userContent }),
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
