/**
 * The limit: a bare node:http server answering a pre-serialized envelope of a given size.
 * Nothing a Node.js service does per request can be cheaper, so service / baseline is the
 * share of one process's ceiling that the service reaches on this machine.
 * Usage: tsx bench/baseline-server.ts <bodyBytes>; prints its port on stdout.
 */
import { createServer } from 'node:http'

const bytes = Number(process.argv[2] ?? 2048)
const filler = 'x'.repeat(Math.max(0, bytes - 60))
const body = Buffer.from(JSON.stringify({ message: 'Search completed successfully', data: { filler } }))
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }

const server = createServer((_request, response) => {
  response.writeHead(200, headers)
  response.end(body)
})
server.keepAliveTimeout = 10_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  console.log(JSON.stringify({ port: address.port }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
