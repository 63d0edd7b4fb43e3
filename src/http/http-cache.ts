/**
 * HTTP caching for front-ends, from each route's `maxAgeMs` (route-policy.ts): a 200 answer to
 * GET gets `Cache-Control: public, max-age` (and, while the client serves stale answers, the
 * same `stale-while-revalidate` window) and a weak `ETag`, so that a repeat with `If-None-Match`
 * gets a bodiless 304. Every other answer without a Cache-Control of its own (errors, probes,
 * metrics, routes without `maxAgeMs`) is `no-store`, so that a browser never keeps an error or a
 * per-user answer.
 */
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { etagOf, ifNoneMatchHas } from './etag.js'
import './route-policy.js'

export default fp(async (app) => {
  const staleWhileRevalidate = app.miniAppConfig.CACHE_SERVE_STALE
  // A few distinct max-ages in all: each policy text is built once.
  const policies = new Map<number, string>()
  const policyFor = (ms: number): string => {
    let policy = policies.get(ms)
    if (policy === undefined) {
      const seconds = Math.floor(ms / 1000)
      policy = ms <= 0 ? 'no-cache' : staleWhileRevalidate ? `public, max-age=${seconds}, stale-while-revalidate=${seconds}` : `public, max-age=${seconds}`
      policies.set(ms, policy)
    }
    return policy
  }

  // The fast path replays these headers as recorded, and answers If-None-Match the same way.
  app.addHook('onSend', mirroredByReplay<onSendHookHandler>(function httpCache (request, reply, payload, done) {
    const maxAgeMs = request.routeOptions.config?.maxAgeMs
    const cacheable = maxAgeMs !== undefined && reply.statusCode === 200 && request.method === 'GET' &&
      (typeof payload === 'string' || Buffer.isBuffer(payload))
    if (!cacheable) {
      if (maxAgeMs !== undefined || !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
      done(null, payload)
      return
    }
    // Routes that answer from the cache set the ETag already (envelope.ts).
    const etag = (reply.getHeader('etag') as string | undefined) ?? etagOf(payload as string | Buffer)
    reply.header('cache-control', policyFor(maxAgeMs))
    reply.header('etag', etag)
    if (ifNoneMatchHas(request.headers['if-none-match'], etag)) {
      reply.code(304)
      // No payload, so no Content-Length: a 304 may only repeat the 200's, or leave it out.
      done(null, null)
      return
    }
    done(null, payload)
  }))
}, { name: 'http-cache' })
