import { deflateSync } from 'node:zlib'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { useFileFixture } from './file-fixture'
import type { AddressInfo } from 'node:net'
import {
  errorChunk,
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
} from '../../server/lib/openrouter/chunks'
import type { ChatCompletionChunk, ChatCompletionRequest, FinishReason } from '../../server/lib/openrouter/types'
import { fakeEmbeddingsAnswer } from './fake-embeddings'

/**
 * A fake OpenRouter: a real HTTP server on a loopback port that answers `POST /chat/completions`
 * and `GET /models` in the exact wire format, from scripted replies. It records every request and
 * notices when a client goes away (and then stops writing).
 */

/** One step of a streamed reply. */
export type StreamStep =
  | { chunk: ChatCompletionChunk | Record<string, unknown> }
  /** A chunk built at the moment it is written (e.g. carrying a timestamp). */
  | { chunkAt: () => ChatCompletionChunk | Record<string, unknown> }
  | { comment: string }
  | { raw: string }
  | { delayMs: number }
  | { done: true }
  /** Stop writing but keep the connection open, until the client gives up. */
  | { stall: true }
  /** Hold the stream until `until` settles (or the client gives up), then go on. */
  | { until: Promise<unknown> }
  /** Destroy the socket mid-stream (no [DONE], no clean end). */
  | { destroy: true }

export type FakeReply =
  | { type: 'stream', steps: StreamStep[], headers?: Record<string, string> }
  | { type: 'http-error', status: number, body?: unknown, headers?: Record<string, string> }
  | { type: 'json', status?: number, body: unknown }
  /** Accept the request and never send headers. */
  | { type: 'stall-headers' }
  /** Destroy the socket before any response. */
  | { type: 'drop-connection' }

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: ChatCompletionRequest
  /** Set when the client closed the connection before the reply finished. */
  clientDisconnected: boolean
  /** Stream steps written before the reply ended or the client left. */
  stepsWritten: number
}

/** Replies in order, or a function of the request and its position since the script was set. */
export type ReplyScript = FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply)

export interface FakeOpenRouter {
  /** Base URL to configure as `openrouter.baseUrl`, e.g. http://127.0.0.1:PORT/api/v1. */
  url: string
  requests: RecordedRequest[]
  /** Headers of every GET /models request. */
  modelRequests: IncomingHttpHeaders[]
  /** Every POST /embeddings: its headers, model and number of texts. */
  embeddingRequests: Array<{ headers: IncomingHttpHeaders, model: string, inputs: number }>
  /** Makes /embeddings answer 503 (true) or vectors again (false). */
  embeddingsDown: (down: boolean) => void
  /** Every POST /audio/transcriptions (speech to text): its key, model, language and file; each is answered `{ text: "Heard <bytes> bytes of <type>" }`. */
  transcriptionRequests: Array<{ authorization?: string, model: string, language?: string, fileType: string, bytes: number }>
  /**
   * Every chat completion that asked for images (`modalities` with "image"): answered, outside the
   * script, with a small PNG (the fake image model), or what `imageReply` says.
   */
  imageRequests: Array<{ authorization?: string, model: string, prompt: string, sourceImages: number }>
  /** Every POST /audio/speech (text to speech): its key, model, voice and text; each is answered with a short silent WAV. */
  speechRequests: Array<{ authorization?: string, model: string, voice: string, input: string }>
  /** How the fake image model answers from now on: a PNG (default), a link, an oversized image, or an error. */
  imageReply: (reply: 'png' | 'link' | 'huge' | 'error') => void
  /** Replace the script for the following requests. */
  script: (replies: ReplyScript) => void
  /** Resolves when request N (0-based) has ended on the server side. */
  settled: (index: number) => Promise<RecordedRequest>
  close: () => Promise<void>
}

export const FAKE_MODELS = [
  { id: 'openai/gpt-4o-mini', name: 'OpenAI: GPT-4o-mini', context_length: 128000, pricing: { prompt: '0.00000015', completion: '0.0000006' }, supported_parameters: ['tools', 'tool_choice', 'max_tokens'], architecture: { input_modalities: ['text', 'image'] } },
  { id: 'anthropic/claude-sonnet-4', name: 'Anthropic: Claude Sonnet 4', context_length: 200000, pricing: { prompt: '0.000003', completion: '0.000015' }, supported_parameters: ['tools', 'tool_choice', 'reasoning'] },
  { id: 'meta-llama/llama-3-8b-instruct', name: 'Meta: Llama 3 8B', context_length: 8192, pricing: { prompt: '0.00000003', completion: '0.00000006' }, supported_parameters: ['max_tokens'] },
]

/** An 8×8 PNG in one colour, as the fake image model draws. */
export function fakePng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (bytes: Buffer) => {
    let c = 0xFFFFFFFF
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xFF]! ^ (c >>> 8)
    return (c ^ 0xFFFFFFFF) >>> 0
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const sum = Buffer.alloc(4)
    sum.writeUInt32BE(crc(body))
    return Buffer.concat([length, body, sum])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(8, 0)
  header.writeUInt32BE(8, 4)
  header[8] = 8
  header[9] = 2
  const rows = Buffer.concat(Array.from({ length: 8 }, () => Buffer.from([0, ...Array.from({ length: 8 }, () => [240, 120, 40]).flat()])))
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))])
}

/** A silent WAV of `ms` milliseconds (8 kHz, 8-bit mono), as the fake speech model reads. */
export function silentWav(ms = 300): Buffer {
  const samples = Math.round(8 * ms)
  const header = Buffer.alloc(44)
  header.write('RIFF', 0, 'ascii')
  header.writeUInt32LE(36 + samples, 4)
  header.write('WAVEfmt ', 8, 'ascii')
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(8_000, 24)
  header.writeUInt32LE(8_000, 28)
  header.writeUInt16LE(1, 32)
  header.writeUInt16LE(8, 34)
  header.write('data', 36, 'ascii')
  header.writeUInt32LE(samples, 40)
  return Buffer.concat([header, Buffer.alloc(samples, 128)])
}

const meta: ChunkMeta = { id: 'gen-fake-1', model: 'fake/model', created: 1_763_800_000, provider: 'Fake' }

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = []
  for await (const part of request) parts.push(part as Buffer)
  return Buffer.concat(parts).toString('utf8')
}

const wait = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

async function writeStream(reply: Extract<FakeReply, { type: 'stream' }>, response: ServerResponse, record: RecordedRequest): Promise<void> {
  response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Generation-Id': 'gen-fake-1', ...reply.headers })
  response.flushHeaders()
  for (const step of reply.steps) {
    if (record.clientDisconnected) return
    if ('delayMs' in step) await wait(step.delayMs)
    else if ('stall' in step) return await new Promise<void>(resolve => response.once('close', () => resolve()))
    else if ('until' in step) {
      const closed = new Promise<'closed'>(resolve => response.once('close', () => resolve('closed')))
      if (await Promise.race([step.until.then(() => 'go' as const, () => 'go' as const), closed]) === 'closed') return
    }
    else if ('destroy' in step) return void response.socket?.destroy()
    else if ('chunk' in step) response.write(sseData(step.chunk))
    else if ('chunkAt' in step) response.write(sseData(step.chunkAt()))
    else if ('comment' in step) response.write(`: ${step.comment}\n\n`)
    else if ('raw' in step) response.write(step.raw)
    else if ('done' in step) response.write(SSE_DONE)
    record.stepsWritten++
  }
  response.end()
}

/** Starts the fake on a free loopback port. `keepRequests: false` records nothing (long benchmarks). */
export async function startFakeOpenRouter(initial: ReplyScript = [], options: { keepRequests?: boolean } = {}): Promise<FakeOpenRouter> {
  const keep = options.keepRequests !== false
  let script: ReplyScript = initial
  let scriptOffset = 0
  let requestCount = 0
  const requests: RecordedRequest[] = []
  const modelRequests: IncomingHttpHeaders[] = []
  const embeddingRequests: FakeOpenRouter['embeddingRequests'] = []
  const transcriptionRequests: FakeOpenRouter['transcriptionRequests'] = []
  const imageRequests: FakeOpenRouter['imageRequests'] = []
  const speechRequests: FakeOpenRouter['speechRequests'] = []
  let imageReply: Parameters<FakeOpenRouter['imageReply']>[0] = 'png'
  let embeddingsDown = false
  const settledWaiters = new Map<number, Array<(record: RecordedRequest) => void>>()
  const settledRecords = new Map<number, RecordedRequest>()

  const nextReply = (record: RecordedRequest, index: number): FakeReply => {
    if (typeof script === 'function') return script(record, index - scriptOffset)
    const reply = script[index - scriptOffset]
    if (!reply) return { type: 'http-error', status: 500, body: { error: { code: 500, message: `fake: no reply scripted for request ${index}` } } }
    return reply
  }

  const markSettled = (index: number, record: RecordedRequest) => {
    if (keep) settledRecords.set(index, record)
    for (const waiter of settledWaiters.get(index) ?? []) waiter(record)
    settledWaiters.delete(index)
  }

  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake')
    const path = url.pathname.replace(/^\/api\/v1/, '')
    if (request.method === 'GET' && path === '/models') {
      modelRequests.push(request.headers)
      const onlyTools = url.searchParams.get('supported_parameters') === 'tools'
      const data = onlyTools ? FAKE_MODELS.filter(model => model.supported_parameters.includes('tools')) : FAKE_MODELS
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ data }))
      return
    }
    if (request.method === 'POST' && path === '/embeddings') {
      // Deterministic embeddings (fake-embeddings.ts), counted with the other requests' records.
      const body = JSON.parse(await readBody(request) || '{}') as { model?: string, input?: string | string[] }
      embeddingRequests.push({ headers: request.headers, model: body.model ?? '', inputs: Array.isArray(body.input) ? body.input.length : 1 })
      if (embeddingsDown) {
        response.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 503, message: 'fake: embeddings are down' } }))
        return
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(fakeEmbeddingsAnswer(body.model ?? '', body.input ?? '')))
      return
    }
    if (request.method === 'POST' && path === '/audio/transcriptions') {
      // A Whisper-style endpoint: multipart form with the model and the recording.
      const raw = await new Promise<Buffer>((resolve) => {
        const parts: Buffer[] = []
        request.on('data', (part: Buffer) => parts.push(part)).on('end', () => resolve(Buffer.concat(parts)))
      })
      const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData()
      const file = form.get('file') as File | null
      const language = form.get('language')
      transcriptionRequests.push({ authorization: request.headers.authorization, model: String(form.get('model') ?? ''), ...(language ? { language: String(language) } : {}), fileType: file?.type ?? '', bytes: file?.size ?? 0 })
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ text: ` Heard ${file?.size ?? 0} bytes of ${file?.type ?? 'nothing'}. ` }))
      return
    }
    if (request.method === 'POST' && path === '/audio/speech') {
      const body = JSON.parse(await readBody(request) || '{}') as { model?: string, voice?: string, input?: string }
      speechRequests.push({ authorization: request.headers.authorization, model: body.model ?? '', voice: body.voice ?? '', input: body.input ?? '' })
      response.writeHead(200, { 'Content-Type': 'audio/wav' }).end(silentWav())
      return
    }
    if (request.method !== 'POST' || path !== '/chat/completions') {
      response.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: 'Not found' } }))
      return
    }

    const rawBody = await readBody(request)
    const asked = JSON.parse(rawBody || '{}') as { model?: string, modalities?: string[], messages?: Array<{ content?: unknown }> }
    if (asked.modalities?.includes('image')) {
      const parts = Array.isArray(asked.messages?.[0]?.content) ? asked.messages[0].content as Array<{ type?: string, text?: string }> : []
      imageRequests.push({ authorization: request.headers.authorization, model: asked.model ?? '', prompt: parts.find(part => part.type === 'text')?.text ?? '', sourceImages: parts.filter(part => part.type === 'image_url').length })
      if (imageReply === 'error') {
        response.writeHead(402, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 402, message: 'fake: insufficient credits' } }))
        return
      }
      const url = imageReply === 'link' ? 'https://images.example/picture.png' : `data:image/png;base64,${(imageReply === 'huge' ? Buffer.concat([fakePng(), Buffer.alloc(12 * 1024 * 1024)]) : fakePng()).toString('base64')}`
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        choices: [{ message: { role: 'assistant', content: 'Here is an orange square.', images: [{ type: 'image_url', image_url: { url } }] }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 1290, total_tokens: 1302, cost: 0.039 },
      }))
      return
    }
    const record: RecordedRequest = { method: request.method, path, headers: request.headers, body: JSON.parse(rawBody || '{}'), clientDisconnected: false, stepsWritten: 0 }
    const index = requestCount++
    if (keep) requests.push(record)
    response.once('close', () => {
      if (!response.writableFinished) record.clientDisconnected = true
      markSettled(index, record)
    })

    const reply = nextReply(record, index)
    switch (reply.type) {
      case 'stream':
        await writeStream(reply, response, record)
        break
      case 'http-error':
        response.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers })
        response.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? { error: { code: reply.status, message: `fake error ${reply.status}` } }))
        break
      case 'json':
        response.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply.body))
        break
      case 'stall-headers':
        break // the client's deadline (or abort) closes the socket
      case 'drop-connection':
        request.socket.destroy()
        break
    }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/api/v1`,
    requests,
    modelRequests,
    embeddingRequests,
    transcriptionRequests,
    imageRequests,
    speechRequests,
    imageReply: (reply) => {
      imageReply = reply
    },
    embeddingsDown: (down) => {
      embeddingsDown = down
    },
    script: (replies) => {
      script = replies
      scriptOffset = requestCount
    },
    settled: index => new Promise((resolve) => {
      const done = settledRecords.get(index)
      if (done) return resolve(done)
      settledWaiters.set(index, [...(settledWaiters.get(index) ?? []), resolve])
    }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

// ----------------------------------------------------------------------------------------------
// Reply builders for common scenarios

/** Splits text into pieces of about `size` characters. */
export function splitText(text: string, size: number): string[] {
  const pieces: string[] = []
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
  return pieces
}

/** A plain text answer in many small chunks (`delayMs` apart, if given), with keep-alives, role chunk, finish, usage and [DONE]. */
export function textReply(text: string, options: { pieceSize?: number, delayMs?: number, finishReason?: FinishReason, usage?: { prompt: number, completion: number, cost?: number } } = {}): FakeReply {
  const delay: StreamStep[] = options.delayMs ? [{ delayMs: options.delayMs }] : []
  return {
    type: 'stream',
    steps: [
      { comment: 'OPENROUTER PROCESSING' },
      { chunk: roleChunk(meta) },
      ...splitText(text, options.pieceSize ?? 3).flatMap(piece => [...delay, { chunk: textChunk(meta, piece) }]),
      { chunk: finishChunk(meta, options.finishReason ?? 'stop') },
      { chunk: usageChunk(meta, options.usage ?? { prompt: 10, completion: 5 }) },
      { done: true },
    ],
  }
}

export interface ScriptedToolCall {
  id: string
  name: string
  arguments: string
}

/**
 * Tool calls the way real traffic fragments them: each call opens with id and name and empty
 * arguments, then argument pieces follow; with `interleave`, pieces of parallel calls alternate.
 */
export function toolCallReply(calls: ScriptedToolCall[], options: { text?: string, pieceSize?: number, interleave?: boolean, finishReason?: FinishReason | null } = {}): FakeReply {
  const steps: StreamStep[] = [{ chunk: roleChunk(meta) }]
  if (options.text) steps.push(...splitText(options.text, 4).map(piece => ({ chunk: textChunk(meta, piece) })))
  const pieces = calls.map(call => splitText(call.arguments, options.pieceSize ?? 5))
  if (options.interleave) {
    calls.forEach((call, index) => steps.push({ chunk: toolCallOpenChunk(meta, index, call.id, call.name) }))
    for (let round = 0; round < Math.max(...pieces.map(list => list.length)); round++) {
      calls.forEach((_call, index) => {
        const piece = pieces[index]![round]
        if (piece !== undefined) steps.push({ chunk: toolCallArgumentsChunk(meta, index, piece) })
      })
    }
  } else {
    calls.forEach((call, index) => {
      steps.push({ chunk: toolCallOpenChunk(meta, index, call.id, call.name) })
      for (const piece of pieces[index]!) steps.push({ chunk: toolCallArgumentsChunk(meta, index, piece) })
    })
  }
  if (options.finishReason !== null) steps.push({ chunk: finishChunk(meta, options.finishReason ?? 'tool_calls') })
  steps.push({ chunk: usageChunk(meta, { prompt: 20, completion: 8 }) }, { done: true })
  return { type: 'stream', steps }
}

/**
 * A text answer in parts that the test lets through: the first part streams at once, each further
 * part when `open()` is called (one gate per call; `openAll()` lets the rest through). For tests
 * that act on an answer while it streams, and then let it end at once rather than wait it out.
 */
export function gatedTextReply(parts: string[], options: { pieceSize?: number } = {}): { reply: FakeReply, open: () => void, openAll: () => void } {
  const gates = parts.slice(1).map(() => {
    let open!: () => void
    const opened = new Promise<void>(resolve => (open = resolve))
    return { open, opened }
  })
  let next = 0
  const steps: StreamStep[] = [{ chunk: roleChunk(meta) }]
  parts.forEach((part, index) => {
    if (index > 0) steps.push({ until: gates[index - 1]!.opened })
    steps.push(...splitText(part, options.pieceSize ?? 40).map(piece => ({ chunk: textChunk(meta, piece) })))
  })
  steps.push({ chunk: finishChunk(meta, 'stop') }, { chunk: usageChunk(meta, { prompt: 10, completion: 5 }) }, { done: true })
  return {
    reply: { type: 'stream', steps },
    open: () => gates[next++]?.open(),
    openAll: () => gates.forEach(gate => gate.open()),
  }
}

/** Text, then a mid-stream error chunk (HTTP 200), then the end of the stream. */
export function midStreamErrorReply(text: string, code: number | string, message: string): FakeReply {
  return {
    type: 'stream',
    steps: [{ chunk: roleChunk(meta) }, ...splitText(text, 4).map(piece => ({ chunk: textChunk(meta, piece) })), { chunk: errorChunk(meta, code, message) }, { done: true }],
  }
}

export { meta as fakeChunkMeta, SSE_KEEP_ALIVE }

/**
 * The fake upstream of a test file: started before its tests, closed after them (after the
 * servers that call it, when it is registered before their fixture).
 */
export function useFakeOpenRouter(): FakeOpenRouter {
  return useFileFixture('The fake OpenRouter', () => startFakeOpenRouter(), fake => fake.close())
}
