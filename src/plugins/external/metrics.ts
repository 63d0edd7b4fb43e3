/** `GET /metrics` in Prometheus text format, and the HTTP request metrics that feed it. */
import fp from 'fastify-plugin'
import type { Counter, Histogram } from 'prom-client'
import type { Metrics } from '../../metrics.js'

export default fp<{ metrics: Metrics }>(async (app, { metrics }) => {
  const { httpRequests, httpDuration, inFlight, registry } = metrics
  // Labelled children, made once per route and status: prom-client would hash the labels on every call.
  const counters = new Map<string, Counter.Internal>()
  const histograms = new Map<string, Histogram.Internal<'route'>>()

  app.addHook('onRequest', (_request, _reply, done) => {
    inFlight.inc()
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    inFlight.dec()
    // The route pattern, never the raw URL: one series per route, whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${reply.statusCode} ${route}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = httpRequests.labels(route, request.method, String(reply.statusCode))
      counters.set(key, counter)
    }
    counter.inc()
    let histogram = histograms.get(route)
    if (histogram === undefined) {
      histogram = httpDuration.labels(route)
      histograms.set(route, histogram)
    }
    histogram.observe(reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics' })
