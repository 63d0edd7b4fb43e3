/**
 * HTTP caching for front-ends: `Cache-Control` with the same max-age as the client's answer
 * cache (and the same stale-while-revalidate window, when it serves stale answers), and a weak
 * `ETag` so that a repeat with `If-None-Match` gets a bodiless 304.
 * Only successful GET answers of the listed routes are cacheable; every other /api answer is
 * `no-store`, so that a browser never keeps an error.
 */
import fp from 'fastify-plugin'
import { etagOf, ifNoneMatchHas } from '../../etag.js'

export interface HttpCacheOptions {
  /** Max-age per route URL pattern (as registered, e.g. `/api/user/:address`), in milliseconds; 0 means no-cache. */
  maxAgeMs: Record<string, number>
  /** The answer cache serves stale answers for one more max-age: browsers and proxies may too. */
  staleWhileRevalidate: boolean
}

export default fp<HttpCacheOptions>(async (app, { maxAgeMs, staleWhileRevalidate }) => {
  const cacheControl = new Map(Object.entries(maxAgeMs).map(([url, ms]) => {
    const seconds = Math.floor(ms / 1000)
    if (ms <= 0) return [url, 'no-cache']
    return [url, staleWhileRevalidate ? `public, max-age=${seconds}, stale-while-revalidate=${seconds}` : `public, max-age=${seconds}`]
  }))

  app.addHook('onSend', (request, reply, payload, done) => {
    const url = request.routeOptions.url
    const policy = url === undefined ? undefined : cacheControl.get(url)
    if (policy === undefined) {
      if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store')
      done(null, payload)
      return
    }
    if (reply.statusCode !== 200 || request.method !== 'GET' || !(typeof payload === 'string' || Buffer.isBuffer(payload))) {
      reply.header('cache-control', 'no-store')
      done(null, payload)
      return
    }
    // Routes that answer from the cache set the ETag already (success-envelope.ts).
    const etag = (reply.getHeader('etag') as string | undefined) ?? etagOf(payload)
    reply.header('cache-control', policy)
    reply.header('etag', etag)
    if (ifNoneMatchHas(request.headers['if-none-match'], etag)) {
      reply.code(304)
      // No payload, so no Content-Length: a 304 may only repeat the 200's, or leave it out.
      done(null, null)
      return
    }
    done(null, payload)
  })
}, { name: 'http-cache' })
