/**
 * HTTP caching for front-ends, from each route's `maxAgeMs` (route-policy.ts): a 200 answer to
 * GET gets `Cache-Control: public, max-age` (and, while the client serves stale answers, the
 * same `stale-while-revalidate` window) and a weak `ETag`, so that a repeat with `If-None-Match`
 * gets a bodiless 304. Every other answer without a Cache-Control of its own (errors, probes,
 * metrics, routes without `maxAgeMs`) is `no-store`, so that a browser never keeps an error or a
 * per-user answer.
 *
 * On a route marked `auth` (true or 'optional') the answer depends on the caller: an answer to a
 * signed-in caller is `no-store` whatever the route's `maxAgeMs`, and every answer names
 * the credential headers in `Vary`, so that a shared cache never hands the anonymous answer it
 * kept (an optional route's, public when the route has `maxAgeMs`) to a caller who signed in.
 */
import type { FastifyReply, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { etagOf, ifNoneMatchHas } from './etag.js'
import './route-policy.js'

/** Adds `names` to the reply's Vary, each once (another hook may have named Origin). */
function varyOn (reply: FastifyReply, names: readonly string[]): void {
  const current = String(reply.getHeader('vary') ?? '')
  const listed = new Set(current.split(',').map(name => name.trim().toLowerCase()).filter(Boolean))
  if (listed.has('*')) return
  const added = names.filter(name => !listed.has(name.toLowerCase()))
  if (added.length > 0) reply.header('vary', [current, ...added].filter(Boolean).join(', '))
}

export default fp(async (app) => {
  const staleWhileRevalidate = app.miniAppConfig.CACHE_SERVE_STALE
  // The request headers that may carry a caller's credentials (auth/sign-in.ts).
  const credentialHeaders = app.miniAppConfig.AUTH_ACCEPT_SIGNATURE_HEADER ? ['Authorization', 'Signature'] : ['Authorization']
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
    const { maxAgeMs, auth } = request.routeOptions.config ?? {}
    if (auth === true || auth === 'optional') varyOn(reply, credentialHeaders)
    const signedIn = request.user !== null
    const cacheable = maxAgeMs !== undefined && !signedIn && reply.statusCode === 200 && request.method === 'GET' &&
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
