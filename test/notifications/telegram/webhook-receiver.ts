/**
 * A webhook on loopback for the Telegram emulator to POST updates to: it records each request
 * (headers and parsed body) and answers with the statuses a test scripts, 200 once they run out.
 */
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { TestContext } from 'node:test'

export interface ReceivedUpdate {
  headers: IncomingHttpHeaders
  rawBody: string
  body: any
}

export interface WebhookReceiver {
  url: string
  received: ReceivedUpdate[]
  /** The next answers' statuses, in order. */
  answerWith (...statuses: number[]): void
}

export async function startWebhookReceiver (t: TestContext): Promise<WebhookReceiver> {
  const received: ReceivedUpdate[] = []
  const statuses: number[] = []
  const server = createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', chunk => { text += chunk })
    request.on('end', () => {
      received.push({ headers: request.headers, rawBody: text, body: JSON.parse(text) })
      response.writeHead(statuses.shift() ?? 200, { 'content-type': 'application/json' })
      response.end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => { server.closeAllConnections(); server.close() })
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/api/telegram/webhook`, received, answerWith: (...next) => { statuses.push(...next) } }
}
