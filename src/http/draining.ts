/**
 * While the server shuts down, its answers close their connection (`Connection: close`), so that
 * keep-alive clients let go and the server can finish once the requests in flight are answered.
 * The fast path hands every request to Fastify once the server stopped listening.
 *
 * From the first preClose hook on, not only once the server stopped listening: the preClose
 * hooks answer what waits (long-polls, events/plugin.ts) while the server still listens, and an
 * answer kept alive then left a connection that became idle after Fastify closed the idle ones,
 * holding the close for the keep-alive timeout (72 s). Registered before the plugins whose
 * preClose hooks answer requests, so that this one runs first.
 *
 * A connection that has sent no request yet (a client that opened a socket and went away, one
 * that trickles its headers) is neither idle for Node nor a request to finish: it held the close
 * until its headers timeout (a minute and more). Such connections are closed with the server.
 */
import type { Socket } from 'node:net'
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'

export default fp(async (app) => {
  let closing = false
  const silent = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    silent.add(socket)
    socket.once('close', () => silent.delete(socket))
  })
  // Per request, not per connection: a connection that sent part of its headers is silent too.
  app.server.on('request', request => { silent.delete(request.socket) })
  const closeSilent = (): void => {
    for (const socket of silent) socket.destroy()
  }
  app.addHook('preClose', async () => {
    closing = true
    closeSilent()
  })
  // Again once the preClose hooks are done: a connection may have opened meanwhile.
  app.addHook('onClose', async () => closeSilent())
  app.addHook('onSend', mirroredByReplay<onSendHookHandler>(function closeWhileDraining (_request, reply, payload, done) {
    if (closing || !app.server.listening) reply.header('connection', 'close')
    done(null, payload)
  }))
}, { name: 'draining' })
