/**
 * Every answer carries `X-Request-Id`: the client's own when it is short and plain, else a new
 * UUID. The same id is the log lines' `reqId`; the fast path makes one the same way.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'

const REQUEST_ID = /^[\w.:-]{1,128}$/

/** Fastify's `genReqId`, and the fast path's. */
export function requestIdOf (request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

export default fp(async (app) => {
  app.addHook('onSend', mirroredByReplay<onSendHookHandler>(function sendRequestId (request, reply, payload, done) {
    reply.header('x-request-id', request.id)
    done(null, payload)
  }))
}, { name: 'request-id' })
