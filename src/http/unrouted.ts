/**
 * Requests no route's own hooks see, answered or counted in one onRequest hook, registered after
 * the metrics' in-flight count (which its answers then leave balanced) and before CORS:
 * - every one is counted in the rate limit (`app.limitRequest`): an unknown URL, a malformed one
 *   (http/framework-errors.ts routes it here), a CORS preflight (@fastify/cors answers it in a hook
 *   of its own, before any route's), a request without Host. None of them is free.
 * - a URL no route matches answers 404 here, before its body is read: Fastify would parse a body
 *   before its not-found handler runs. When a body was announced, the answer closes the
 *   connection rather than have Node read and discard a body nobody wants.
 * - a URL the router refused (bad percent-encoding), an HTTP/1.1 request without Host, and an
 *   OPTIONS request that is no preflight (`OPTIONS *`, no Origin) answer 400, in the envelope:
 *   Node and @fastify/cors would answer them in plain text.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { notFound } from './error-handler.js'
import { HttpError } from './errors.js'
import { refusalOf } from './framework-errors.js'

function announcesBody (request: FastifyRequest): boolean {
  const { headers } = request.raw
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')
}

/** The answer for a request no route's hooks see, once it is counted; undefined to go on (a preflight, for CORS). */
function refusal (request: FastifyRequest, reply: FastifyReply): HttpError | undefined {
  if (request.is404) {
    if (announcesBody(request)) reply.header('connection', 'close')
    return refusalOf(request.raw) ?? notFound(request)
  }
  // HTTP/1.1 requires Host; Node would answer its absence with a bare 400 of its own.
  if (request.headers.host === undefined && request.raw.httpVersion === '1.1') return new HttpError(400, 'Bad request', 'The request has no Host header')
  if (request.method === 'OPTIONS' && (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined)) {
    return new HttpError(400, 'Bad request', 'An OPTIONS request must be a CORS preflight, with Origin and Access-Control-Request-Method')
  }
  return undefined
}

export default fp(async (app) => {
  // A replayable route's GET has a Host, is no OPTIONS and matched its route: the hook does
  // nothing for it (the fast path declines requests without Host).
  app.addHook('onRequest', mirroredByReplay(function answerUnrouted (request, reply, done) {
    if (!request.is404 && request.headers.host !== undefined && request.method !== 'OPTIONS') return done()
    app.limitRequest(request, reply).then(() => done(refusal(request, reply)), done)
  }))
  // An answer that refused a body before it all arrived (the 404 above; Fastify's 413 and its
  // answers to malformed bodies) closes the connection, but Node would first go on reading and
  // discarding what is left of the body until its close completes. Under a flood of large bodies
  // that was most of their cost (bench/hostile.ts): the connection is closed at once instead, or,
  // when part of the answer still waits in the socket's buffer, as soon as that has left
  // (destroying it then would drop the answer). Not end()/destroySoon(): while the close waits,
  // Node would read and discard the body again.
  app.addHook('onResponse', mirroredByReplay(function closeUnreadBody (request, reply, done) {
    const socket = request.raw.socket
    if (!request.raw.complete && reply.getHeader('connection') === 'close' && socket !== null) {
      if (socket.writableLength === 0) socket.destroy()
      else socket.pause().once('drain', () => socket.destroy())
    }
    done()
  }))
}, { name: 'unrouted', dependencies: ['rate-limit', 'error-handler', 'metrics'] })
