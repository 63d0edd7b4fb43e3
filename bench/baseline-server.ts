/**
 * The limit: a bare node:http server answering a pre-serialized body, the very bytes the
 * service answers for the hot search (the load generator's cost depends on the bytes: UTF-8
 * text costs it more than ASCII). Nothing a Node.js service does per request can be cheaper, so
 * service / baseline is the share of one process's ceiling that the service reaches here.
 * Usage: tsx bench/baseline-server.ts <body file>; prints its port as JSON on stdout.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const body = readFileSync(process.argv[2] as string)
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }

const server = createServer((_request, response) => {
  response.writeHead(200, headers)
  response.end(body)
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  console.log(JSON.stringify({ port: address.port }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
