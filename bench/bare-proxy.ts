/**
 * The floor of the cold path: a bare node:http server that turns each search into one POST to the
 * node, over the same kind of keep-alive connections as the service's
 * (packages/pocketnet-client/transport.ts: node:http's Agent), and answers the envelope, with
 * nothing else (no routing, validation, cache, failover, headers, metrics or logs). What it adds to
 * the node's latency is what any Node.js proxy adds on this machine; the service's own cost is the
 * rest.
 * Usage: tsx bench/bare-proxy.ts <node URL>; prints its port as JSON on stdout.
 */
import { Agent, createServer, request as post } from 'node:http'

const node = new URL(process.argv[2] as string)
const agent = new Agent({ keepAlive: true, maxSockets: 128 })

const server = createServer((request, response) => {
  const keyword = new URL(request.url ?? '/', 'http://localhost').searchParams.get('keyword') ?? ''
  const body = JSON.stringify({ method: 'search', params: [keyword, 'posts', 0, 0, 21] })
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
  post({ agent, hostname: node.hostname, port: node.port, path: '/public/', method: 'POST', headers }, (answer) => {
    const chunks: Buffer[] = []
    answer.on('data', (chunk: Buffer) => chunks.push(chunk))
    answer.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { result?: { posts?: { data?: unknown[] } } }
      const results = (parsed.result?.posts?.data ?? []).slice(0, 20)
      const envelope = JSON.stringify({ message: 'Search completed successfully', data: { results, total: results.length, hasMore: false } })
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(envelope) })
      response.end(envelope)
    })
  }).on('error', () => {
    response.writeHead(502).end()
  }).end(body)
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  console.log(JSON.stringify({ port: address.port }))
})
process.on('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
