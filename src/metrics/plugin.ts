/**
 * `GET /metrics` in Prometheus text format, the HTTP request metrics that feed it, and
 * `app.metrics` for the plugins that count on their own (the RPC client, the fast path).
 */
import fp from 'fastify-plugin'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { servedUnderPressure } from '../http/under-pressure.js'
import { createMetrics, type Metrics } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

export default fp(async (app) => {
  const metrics = createMetrics()
  const { httpRequests, httpDuration, inFlight, registry } = metrics
  app.decorate('metrics', metrics)

  // The fast path counts its answers in the same series (metrics.fastAnswerCounter).
  app.addHook('onRequest', mirroredByReplay(function countInFlight (_request, _reply, done) {
    inFlight.value++
    done()
  }))
  app.addHook('onResponse', mirroredByReplay(function countResponse (request, reply, done) {
    inFlight.value--
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    httpRequests.inc(route, request.method, String(reply.statusCode))
    httpDuration.observe(httpDuration.series(route), reply.elapsedTime / 1000)
    done()
  }))
  // metrics.scrape(): this registry's metrics, or, in a cluster worker, the whole cluster's (Metrics.scrapeWith).
  // Scraped under overload too (http/under-pressure.ts): that is when the numbers matter.
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false, pressureHandler: servedUnderPressure } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await metrics.scrape())
  })
}, { name: 'metrics' })
