/** `GET /metrics` in Prometheus text format, and the HTTP request metrics that feed it. */
import fp from 'fastify-plugin'
import type { Metrics } from '../../metrics.js'

export default fp<{ metrics: Metrics }>(async (app, { metrics }) => {
  const { httpRequests, httpDuration, inFlight, registry } = metrics
  app.addHook('onRequest', async () => {
    inFlight.inc()
  })
  app.addHook('onResponse', async (request, reply) => {
    inFlight.dec()
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    httpRequests.inc({ route, method: request.method, status: reply.statusCode })
    httpDuration.observe({ route }, reply.elapsedTime / 1000)
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics' })
