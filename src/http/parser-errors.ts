/**
 * Answers for requests Node's HTTP parser rejects before Fastify sees them (headers too large,
 * a request that took too long to arrive, malformed HTTP), in the same JSON envelope as the rest.
 */
import type { Socket } from 'node:net'

const ANSWERS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request header fields too large', 'The request headers exceed the size limit'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout', 'The request did not arrive in time'],
}
const MALFORMED: [number, string, string, string] = [400, 'Bad Request', 'Bad request', 'The request is not valid HTTP']

export function writeParserError (err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, message, error] = ANSWERS[err.code ?? ''] ?? MALFORMED
  const body = JSON.stringify({ message, error })
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}
