// The baseline of the fan-out benchmark: each request is piped straight from the upstream to
// one client, with no job layer, no parsing and no storage. Started as its own process so its CPU
// time can be read from /proc like the real server's.
import { createServer } from 'node:http'
import { Readable } from 'node:stream'

const upstream = process.env.UPSTREAM_URL
const server = createServer(async (request, response) => {
  const upstreamResponse = await fetch(`${upstream}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer baseline' },
    body: JSON.stringify({ model: 'bench/model', stream: true, messages: [{ role: 'user', content: 'go' }] }),
  })
  response.writeHead(200, { 'content-type': 'text/event-stream' })
  Readable.fromWeb(upstreamResponse.body).pipe(response)
})
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('listening'))
