/**
 * `GET /metrics` in Prometheus text format, the HTTP request metrics that feed it, and
 * `app.metrics` for the plugins that count on their own (the RPC client, the fast path).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { HttpError } from '../http/errors.js'
import { servedUnderPressure } from '../http/under-pressure.js'
import { createMetrics, type Metrics } from './metrics.js'
import { sharedScrape } from './shared-scrape.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** How long after it began one scrape answers every GET /metrics (and for as long as it runs). */
const SCRAPE_REUSE_MS = 1000

export interface MetricsPluginOptions {
  /** Milliseconds on a monotonic clock, for the scrape's reuse (tests); default performance.now. */
  clock?: (() => number) | undefined
}

export default fp<MetricsPluginOptions>(async (app, options) => {
  const metrics = createMetrics()
  const { httpRequests, httpDuration, inFlight, registry } = metrics
  app.decorate('metrics', metrics)

  // A request leaves the gauge when answered, or when its connection closes first: Fastify runs
  // no onResponse for an answer its client cut short, such as an event stream it closed.
  const served = new WeakSet<ServerResponse>()
  const leaveInFlight = (response: ServerResponse): void => {
    if (served.delete(response)) inFlight.value--
  }
  // The fast path counts its answers in the same series (metrics.fastAnswerCounter).
  app.addHook('onRequest', mirroredByReplay(function countInFlight (_request, reply, done) {
    inFlight.value++
    served.add(reply.raw)
    reply.raw.once('close', () => { leaveInFlight(reply.raw) })
    done()
  }))
  app.addHook('onResponse', mirroredByReplay(function countResponse (request, reply, done) {
    leaveInFlight(reply.raw)
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    httpRequests.inc(route, request.method, String(reply.statusCode))
    httpDuration.observe(httpDuration.series(route), reply.elapsedTime / 1000)
    done()
  }))
  // metrics.scrape(): this registry's metrics, or, in a cluster worker, the whole cluster's
  // (Metrics.scrapeWith), looked up on each scrape. Shared by concurrent scrapers, and reused until
  // a second after it began (shared-scrape.ts).
  const scrapeOnce = sharedScrape(() => metrics.scrape(), SCRAPE_REUSE_MS, options.clock ?? (() => performance.now()))
  const token = app.miniAppConfig.METRICS_TOKEN === '' ? undefined : digest(app.miniAppConfig.METRICS_TOKEN)
  // Counted in the rate limit like the API, refused scrapes too: the token is checked in
  // preHandler, after the rate limit's onRequest hook, so that guessing it costs the guesser's
  // limit. Served under overload (http/under-pressure.ts): that is when the numbers matter, and
  // it costs little then, one scrape a second whoever asks, the rest answered from it.
  app.get('/metrics', {
    schema: { hide: true },
    config: { pressureHandler: servedUnderPressure },
    preHandler: token === undefined
      ? []
      : [async function requireMetricsToken (request) {
          const given = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
          if (given === undefined || !timingSafeEqual(digest(given), token)) {
            const refusal = new HttpError(401, 'Unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>')
            refusal.code = 'METRICS_TOKEN_REQUIRED'
            refusal.headers = { 'www-authenticate': 'Bearer realm="metrics"' }
            throw refusal
          }
        }],
  }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await scrapeOnce())
  })
}, { name: 'metrics' })

/** Compared as digests: equal lengths whatever was sent, so the comparison takes the same time. */
function digest (text: string): Buffer {
  return createHash('sha256').update(text).digest()
}
