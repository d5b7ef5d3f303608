import type { H3Event } from 'h3'
import { jobPrincipal } from '../lib/http/job-principal'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { messageBodyBytes } from '../lib/http/read-json-body'
import { addMessageVersion, messageVersionSchema, sendThreadMessage as sendMessage, threadMessageSchema } from '../lib/threads/send-message'
import { viewThread as viewBranch } from '../lib/threads/versions'
import { artifactPageHeaders } from '../lib/threads/artifacts'
import { startedServerRuntime } from '../lib/runtime/current'
import type { ChatThread, SentThreadMessage, ThreadWithMessages } from '../../shared/types/thread'

/**
 * Stores the user's message (the request's body: content, files, model, tools, browser tools) and starts
 * the answer as a background job, asked with the thread's settings, its owner's groups' and own instructions, what the assistant remembers of them and (where the operator says so) the passages of its knowledge bases found for the question; with `versionOf`, a new version of that message instead: its
 * question edited (`content`) or answered again (no `content`). Refused before anything is
 * stored: 400 naming what to fix (413 / 415 for a file too large or of a type not taken), 404 for a message not in the thread, 403 for a model the role
 * may not use, 429/503 over a cap or rate, 402 with the daily budget used up.
 */
export async function sendThreadMessage(event: H3Event, thread: ChatThread, versionOf?: string): Promise<SentThreadMessage> {
  const input = versionOf === undefined
    ? await readJsonBody(event, threadMessageSchema, { maxBytes: messageBodyBytes(useServerConfig(event)) })
    : await readJsonBody(event, messageVersionSchema)
  const user = await requireSessionUser(event)
  const dependencies = { jobs: useBackgroundJobs(), threads: useThreadStore(), config: useServerConfig(event) }
  try {
    // The same context a queued message is asked with; the language is the request's (the principal's).
    const { locale: _theirs, ...context } = await startedServerRuntime().answerContext(thread)
    const answering = { ...input, ...context, principal: jobPrincipal(event, useServerConfig(event), user, thread.userId), userApiKey: userApiKeyOf(event) }
    return versionOf === undefined
      ? await sendMessage(dependencies, thread, { ...answering, content: input.content! })
      : await addMessageVersion(dependencies, thread, versionOf, answering)
  } catch (error) {
    throwHttpError(event, error)
  }
}

/** A conversation with the messages of the branch on view and their versions, and its queued messages; with `show`, the branch through that message first (404 when not in it). */
export async function viewThread(event: H3Event, thread: ChatThread, show?: string): Promise<ThreadWithMessages> {
  try {
    const [view, queue] = await Promise.all([viewBranch(useThreadStore(), thread, show), startedServerRuntime().messageQueue.list(thread.id)])
    return queue.length ? { ...view, queue } : view
  } catch (error) {
    throwHttpError(event, error)
  }
}

/**
 * Sends stored bytes as a file: never rendered by the browser as a page of this app (its own CSP
 * with `sandbox`, no sniffing), named for a download. A message's attachment (`inline`, an image
 * as itself, else text; it never changes under its id), a file a model wrote (`text`: shown as
 * plain text, else downloaded; never cached), or an HTML artifact of an answer (`artifact`: a page
 * in a sandbox of its own, see `artifactPageHeaders`).
 */
export function serveFile(event: H3Event, file: { name: string, bytes: Uint8Array }, as: { kind: 'attachment', mediaType?: string } | { kind: 'written', inline: boolean } | { kind: 'artifact', network: boolean }): Buffer {
  const { name, bytes } = file
  if (as.kind === 'artifact') {
    const appOrigins = [getRequestURL(event).origin, event.context.site.appOrigin]
    setResponseHeaders(event, { ...artifactPageHeaders(as.network, appOrigins), 'Content-Length': String(bytes.byteLength), 'Content-Disposition': `inline; filename*=UTF-8''${encodeURIComponent(name)}` })
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
  const attachment = as.kind === 'attachment'
  const inline = attachment || as.inline
  setResponseHeaders(event, {
    'Content-Type': attachment ? (as.mediaType ?? 'text/plain; charset=utf-8') : inline ? 'text/plain; charset=utf-8' : 'application/octet-stream',
    'Content-Length': String(bytes.byteLength),
    'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`,
    'Content-Security-Policy': attachment ? 'default-src \'none\'; img-src \'self\'; style-src \'unsafe-inline\'; sandbox' : 'default-src \'none\'; sandbox',
    'X-Content-Type-Options': 'nosniff',
    // An attachment never changes under its id; a written file may.
    'Cache-Control': attachment ? 'private, max-age=31536000, immutable' : 'private, no-store',
  })
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
