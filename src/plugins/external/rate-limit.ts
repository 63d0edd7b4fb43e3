/**
 * Per-client-IP rate limit: RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW, answered 429 in the
 * envelope with Retry-After. The client IP comes from X-Forwarded-For only for proxies trusted
 * through TRUST_PROXY (Fastify's trustProxy). Probes, metrics and docs are not limited.
 */
import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { HttpError } from '../../errors.js'

const UNLIMITED = ['/healthz', '/readyz', '/metrics', '/docs', '/openapi.json']

function isUnlimited (url: string): boolean {
  return UNLIMITED.some(path => url === path || url.startsWith(`${path}/`))
}

export default fp<{ max: number, timeWindow: string | number }>(async (app, { max, timeWindow }) => {
  // Marked on the route rather than tested per request (allowList): the plugin then gives
  // these routes no hook at all, and the API's requests skip one check each.
  app.addHook('onRoute', (route) => {
    if (isUnlimited(route.url ?? route.path)) route.config = { ...route.config, rateLimit: false }
  })
  await app.register(rateLimit, {
    max,
    timeWindow,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, 'Too many requests', `Rate limit of ${context.max} requests exceeded: retry in ${Math.ceil(context.ttl / 1000)} s`),
  })
}, { name: 'rate-limit' })
