/**
 * While the server shuts down, its answers close their connection (`Connection: close`), so that
 * keep-alive clients let go and the server can finish once the requests in flight are answered.
 * The fast path hands every request to Fastify once the server stopped listening.
 */
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'

export default fp(async (app) => {
  app.addHook('onSend', mirroredByReplay<onSendHookHandler>(function closeWhileDraining (_request, reply, payload, done) {
    if (!app.server.listening) reply.header('connection', 'close')
    done(null, payload)
  }))
}, { name: 'draining' })
