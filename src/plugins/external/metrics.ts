/** `GET /metrics` in Prometheus text format, and the HTTP request metrics that feed it. */
import fp from 'fastify-plugin'
import { childrenOf, type Metrics } from '../../metrics.js'

export default fp<{ metrics: Metrics }>(async (app, { metrics }) => {
  const { httpRequests, httpDuration, inFlight, registry } = metrics
  const counters = childrenOf((route: string, method: string, status: string) => httpRequests.labels(route, method, status))
  const histograms = childrenOf((route: string) => httpDuration.labels(route))

  app.addHook('onRequest', (_request, _reply, done) => {
    inFlight.inc()
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    inFlight.dec()
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    counters(route, request.method, String(reply.statusCode)).inc()
    histograms(route).observe(reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics' })
