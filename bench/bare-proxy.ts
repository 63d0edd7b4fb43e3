/**
 * The floor of the cold path: a bare node:http server that turns each search into one undici
 * POST to the node and answers the envelope, with nothing else (no routing, validation, cache,
 * failover, headers, metrics or logs). What it adds to the node's latency is what any Node.js
 * proxy adds on this machine; the service's own cost is the rest.
 * Usage: tsx bench/bare-proxy.ts <node URL>; prints its port as JSON on stdout.
 */
import { createServer } from 'node:http'
import { Pool } from 'undici'

const node = new Pool(process.argv[2] as string, { connections: 128 })
const headers = { 'content-type': 'application/json' }

const server = createServer((request, response) => {
  const keyword = new URL(request.url ?? '/', 'http://localhost').searchParams.get('keyword') ?? ''
  node.request({ path: '/public/', method: 'POST', headers, body: JSON.stringify({ method: 'search', params: [keyword, 'posts', 0, 0, 21] }) })
    .then(answer => answer.body.json())
    .then((answer) => {
      const results = ((answer as { result?: { posts?: { data?: unknown[] } } }).result?.posts?.data ?? []).slice(0, 20)
      const body = JSON.stringify({ message: 'Search completed successfully', data: { results, total: results.length, hasMore: false } })
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
      response.end(body)
    }, () => {
      response.writeHead(502).end()
    })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  console.log(JSON.stringify({ port: address.port }))
})
process.on('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
