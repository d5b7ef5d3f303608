import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTick } from 'node:timers/promises'
import { createEvent } from 'h3'
import { afterEach, describe, expect, it } from 'vitest'
import { SseConnection } from '../../../server/lib/http/sse-connection'

let server: Server | undefined

afterEach(async () => {
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  server = undefined
})

/** Serves one SSE connection driven by `drive`; resolves with the server address. */
async function serve(options: { maxQueuedBytes: number, keepAliveMs: number }, drive: (connection: SseConnection) => void): Promise<string> {
  server = createServer((req, res) => {
    const connection = new SseConnection(createEvent(req, res), options)
    void connection.send()
    drive(connection)
  })
  await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

const frame = `data: ${'x'.repeat(64 * 1024)}\n\n`

describe('SseConnection', () => {
  it('sends event-stream headers and keep-alive comments', async () => {
    const url = await serve({ maxQueuedBytes: 1024 * 1024, keepAliveMs: 20 }, (connection) => {
      setTimeout(() => connection.close(), 150)
    })
    const response = await fetch(url)
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform')
    expect(response.headers.get('x-accel-buffering')).toBe('no')
    expect(await response.text()).toContain(': keep-alive\n\n')
  })

  it('disconnects a viewer that stops reading once its backlog passes the limit, instead of buffering without end', async () => {
    let accepted = 0
    let refused = false
    let closedByLimit = false
    const done = new Promise<void>((resolve) => {
      void serve({ maxQueuedBytes: 1024 * 1024, keepAliveMs: 60_000 }, async (connection) => {
        connection.onClose(() => resolve())
        // Offer up to 256 MB, giving the socket every chance to drain between frames.
        for (let index = 0; index < 4096; index++) {
          if (!connection.write(frame)) {
            refused = true
            closedByLimit = connection.closed
            break
          }
          accepted += frame.length
          await nextTick()
        }
        connection.close()
      }).then((url) => {
        // A client that connects and then never reads a byte.
        const req = request(url, response => response.pause())
        req.end()
      })
    })
    await done
    expect(refused).toBe(true)
    expect(closedByLimit).toBe(true)
    // What the kernel's socket buffers hold, plus the 1 MiB allowed: far below what was offered.
    expect(accepted).toBeLessThan(64 * 1024 * 1024)
  })

  it('takes a frame larger than the bound only into an empty backlog, so a stalled viewer holds at most one', async () => {
    const snapshot = Buffer.alloc(3 * 1024 * 1024, 'x')
    const outcome = new Promise<{ first: boolean, second: boolean, closed: boolean }>((resolve) => {
      void serve({ maxQueuedBytes: 1024 * 1024, keepAliveMs: 60_000 }, (connection) => {
        const first = connection.write(snapshot)
        const second = connection.write(frame)
        resolve({ first, second, closed: connection.closed })
      }).then((url) => {
        const req = request(url, response => response.pause())
        req.end()
      })
    })
    expect(await outcome).toEqual({ first: true, second: false, closed: true })
  })

  it('keeps a viewer that reads, however much it is sent over time, and reports its backlog draining', async () => {
    let closed = false
    const url = await serve({ maxQueuedBytes: 1024 * 1024, keepAliveMs: 60_000 }, async (connection) => {
      for (let index = 0; index < 128; index++) {
        // Live jobs send at the pace text arrives; wait for the reader as such a pace would.
        while (connection.queuedBytes > 256 * 1024) await new Promise(resolve => setTimeout(resolve, 1))
        if (!connection.write(frame)) break
      }
      closed = connection.closed
      connection.close()
    })
    const body = await (await fetch(url)).text()
    expect(closed).toBe(false)
    expect(body.length).toBe(128 * frame.length)
  })
})
