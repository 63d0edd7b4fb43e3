/**
 * One log line per request, `request completed` with route, method, status and duration: at
 * debug for successes (so that cache hits add no line at the default level), info for 4xx and for
 * 503 (load shedding is load, not a fault, and under overload there is one per refused request),
 * error for other 5xx. The fast path is off while successes are logged, so this sees every request then.
 */
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'

export default fp(async (app) => {
  app.addHook('onResponse', mirroredByReplay(function logRequest (request, reply, done) {
    const status = reply.statusCode
    const level = status >= 500 && status !== 503 ? 'error' : status >= 400 ? 'info' : 'debug'
    // Successes log at debug: build the line only when someone reads it.
    if (level !== 'debug' || request.log.level === 'debug' || request.log.level === 'trace') {
      request.log[level]({ route: request.routeOptions.url, method: request.method, status, durationMs: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed')
    }
    done()
  }))
}, { name: 'access-log' })
