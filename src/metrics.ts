/**
 * The service's Prometheus metrics, one registry per app (so that several apps in one process,
 * as in tests, do not clash). The RPC client feeds the upstream and cache counters through its
 * onAttempt and onCacheLookup hooks; pool gauges are read when Prometheus scrapes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { AttemptEvent, CacheOutcome, PocketNetProxyApi } from '../lib/index.js'

export interface Metrics {
  registry: Registry
  httpRequests: Counter<'route' | 'method' | 'status'>
  httpDuration: Histogram<'route'>
  inFlight: Gauge
  onAttempt (event: AttemptEvent): void
  onCacheLookup (method: string, outcome: CacheOutcome): void
  /** Where the pool gauges read from at scrape time. */
  watchClient (peek: () => PocketNetProxyApi | undefined): void
}

export function createMetrics (): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const upstream = new Counter({
    name: 'pocketnet_upstream_attempts_total',
    help: 'RPC attempts on Pocketnet nodes, by node (position in POCKETNET_NODES), method and outcome',
    labelNames: ['node', 'method', 'outcome'] as const,
    registers: [registry],
  })
  const upstreamDuration = new Histogram({
    name: 'pocketnet_upstream_attempt_duration_seconds',
    help: 'Duration of RPC attempts on Pocketnet nodes',
    labelNames: ['method'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const cache = new Counter({
    name: 'pocketnet_cache_lookups_total',
    help: 'Answer cache lookups by method and outcome (hit, miss, shared: joined a call in flight)',
    labelNames: ['method', 'outcome'] as const,
    registers: [registry],
  })
  // Labelled children made once per label set: prom-client would hash a labels object on every call.
  const attempts = childrenOf((node: string, method: string, outcome: string) => upstream.labels(node, method, outcome))
  const attemptDurations = childrenOf((method: string) => upstreamDuration.labels(method))
  const lookups = childrenOf((method: string, outcome: string) => cache.labels(method, outcome))
  let peek: () => PocketNetProxyApi | undefined = () => undefined
  // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
  new Gauge({
    name: 'pocketnet_nodes_usable',
    help: 'Nodes that answered, with a closed circuit, not lagging',
    registers: [registry],
    collect () {
      this.set(peek()?.nodes().filter(node => node.usable).length ?? 0)
    },
  })
  // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
  new Gauge({
    name: 'pocketnet_best_height',
    help: 'Highest chain height any node reported',
    registers: [registry],
    collect () {
      this.set(peek()?.bestHeight ?? 0)
    },
  })
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route pattern',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    inFlight: new Gauge({ name: 'http_requests_in_flight', help: 'HTTP requests being served', registers: [registry] }),
    onAttempt (event) {
      attempts(event.node, event.method, event.outcome).inc()
      attemptDurations(event.method).observe(event.durationMs / 1000)
    },
    onCacheLookup (method, outcome) {
      lookups(method, outcome).inc()
    },
    watchClient (next) {
      peek = next
    },
  }
}

/** `make(...labels)`, made once per distinct label values and then reused. */
export function childrenOf<L extends string[], C> (make: (...labels: L) => C): (...labels: L) => C {
  const children = new Map<string, C>()
  return (...labels) => {
    const key = labels.join('\u0000')
    let child = children.get(key)
    if (child === undefined) {
      child = make(...labels)
      children.set(key, child)
    }
    return child
  }
}
