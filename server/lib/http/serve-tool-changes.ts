import type { H3Event } from 'h3'
import type { ToolChangeFeed } from '../tools/tool-changes'
import { SseConnection } from './sse-connection'
import type { StreamSlots } from './stream-slots'
import { throwHttpError } from './domain-errors'

/** A page that stops reading falls this far behind at most before it is disconnected (frames are tiny). */
const MAX_QUEUED_BYTES = 16 * 1024
const KEEP_ALIVE_MS = 25_000

/**
 * Serves "the tools changed" as server-sent events: `ready` with the current version at once,
 * then `tools-changed` with the new version whenever the registry or a source's state changes
 * (the page then reads `GET /api/tools` again). Counted against the same per-user, per-address and
 * server stream caps as job streams, so it cannot be used to hold connections either.
 */
export function serveToolChanges(event: H3Event, feed: ToolChangeFeed, slots: StreamSlots, viewer: { userId: string, address?: string }): Promise<void> {
  let release: () => void
  try {
    release = slots.acquire(viewer.userId, `tools:${viewer.userId}`, viewer.address)
  } catch (error) {
    throwHttpError(event, error)
  }
  const connection = new SseConnection(event, { maxQueuedBytes: MAX_QUEUED_BYTES, keepAliveMs: KEEP_ALIVE_MS })
  const frame = (name: string, version: number) => `event: ${name}\ndata: {"version":${version}}\n\n`
  const unsubscribe = feed.subscribe(version => connection.write(frame('tools-changed', version)), () => connection.close())
  connection.onClose(() => {
    unsubscribe()
    release()
  })
  connection.write(frame('ready', feed.current))
  return connection.send()
}
