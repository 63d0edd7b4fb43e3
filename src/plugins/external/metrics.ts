/** `GET /metrics` in Prometheus text format, and the HTTP request metrics that feed it. */
import fp from 'fastify-plugin'
import type { Metrics } from '../../metrics.js'

export default fp<{ metrics: Metrics }>(async (app, { metrics }) => {
  const { httpRequests, httpDuration, inFlight, registry } = metrics

  app.addHook('onRequest', (_request, _reply, done) => {
    inFlight.value++
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    inFlight.value--
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    httpRequests.inc(route, request.method, String(reply.statusCode))
    httpDuration.observe(httpDuration.series(route), reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics' })
