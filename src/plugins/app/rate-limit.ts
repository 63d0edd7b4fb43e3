/**
 * Per-client rate limit: RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW, answered 429 in the
 * envelope with Retry-After; every limited answer carries X-RateLimit-Limit, -Remaining and
 * -Reset. The client is its address (client-address.ts: X-Forwarded-For only from proxies
 * trusted through TRUST_PROXY). Probes, metrics and docs are not limited.
 *
 * The limiter itself (rate-limiter.ts) is shared with the fast path, which answers repeats
 * before Fastify sees them: one count per request, whichever layer answers it.
 */
import type { IncomingMessage } from 'node:http'
import type { onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../../errors.js'
import type { RateLimiter } from '../../rate-limiter.js'

const UNLIMITED = ['/healthz', '/readyz', '/metrics', '/docs', '/openapi.json']

function isUnlimited (url: string): boolean {
  return UNLIMITED.some(path => url === path || url.startsWith(`${path}/`))
}

export interface RateLimitOptions {
  limiter: RateLimiter
  clientAddress: (request: IncomingMessage) => string
}

export default fp<RateLimitOptions>(async (app, { limiter, clientAddress }) => {
  const limit = String(limiter.max)
  const onRequest: onRequestHookHandler = (request, reply, done) => {
    const decision = limiter.decide(request.raw, clientAddress(request.raw))
    reply.header('x-ratelimit-limit', limit)
    reply.header('x-ratelimit-remaining', decision.remaining)
    reply.header('x-ratelimit-reset', decision.resetSeconds)
    if (decision.allowed) {
      done()
      return
    }
    reply.header('retry-after', decision.resetSeconds)
    done(new HttpError(429, 'Too many requests', `Rate limit of ${limiter.max} requests exceeded: retry in ${decision.resetSeconds} s`))
  }
  // A hook on each limited route rather than a test per request: the exempt routes run nothing.
  app.addHook('onRoute', (route) => {
    if (isUnlimited(route.url ?? route.path)) return
    route.onRequest = route.onRequest === undefined ? [onRequest] : [...[route.onRequest].flat(), onRequest]
  })
}, { name: 'rate-limit' })
