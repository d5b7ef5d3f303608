import { createServer } from 'node:net'

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return await new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}
