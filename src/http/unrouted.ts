/**
 * A request no route matches is answered 404 in its onRequest hook: before its body is read or
 * parsed (Fastify parses bodies before its not-found handler runs), and after the rate limit has
 * counted it (rate-limit.ts). A body left unread is discarded by Node as it arrives, never parsed.
 * An HTTP/1.1 request without Host is refused here too, in the envelope.
 */
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { notFound } from './error-handler.js'
import { HttpError } from './errors.js'

export default fp(async (app) => {
  // The fast path replays only URLs a route answered: nothing for it to mirror.
  app.addHook('onRequest', mirroredByReplay(function answerUnrouted (request, _reply, done) {
    if (request.is404) return done(notFound(request))
    // HTTP/1.1 requires Host; Node would answer its absence with a bare 400 of its own.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') return done(new HttpError(400, 'Bad request', 'The request has no Host header'))
    // An OPTIONS request that is no CORS preflight (OPTIONS *, or no Origin): @fastify/cors
    // would answer it in plain text.
    if (request.method === 'OPTIONS' && (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined)) {
      return done(new HttpError(400, 'Bad request', 'An OPTIONS request must be a CORS preflight, with Origin and Access-Control-Request-Method'))
    }
    done()
  }))
}, { name: 'unrouted', dependencies: ['rate-limit', 'error-handler', 'metrics'] })
