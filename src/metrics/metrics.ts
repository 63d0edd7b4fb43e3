/**
 * The service's Prometheus metrics, one registry per app (so that several apps in one process,
 * as in tests, do not clash). The RPC client feeds the upstream and cache counters through its
 * onAttempt and onCacheLookup hooks; pool gauges are read when Prometheus scrapes. Per-request
 * counts are plain numbers (families.ts); prom-client formats them and adds Node's own.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import type { AttemptEvent, CacheOutcome, OverloadEvent, PocketNetProxyApi, RedisOperationEvent, SharedOutcome } from 'pocketnet-client'
import { CounterFamily, HistogramFamily } from './families.js'

export interface Metrics {
  registry: Registry
  httpRequests: CounterFamily<'route' | 'method' | 'status'>
  httpDuration: HistogramFamily<'route'>
  /** Requests being served; the gauge reads it at scrape time. */
  inFlight: { value: number }
  onAttempt (event: AttemptEvent): void
  /** A call a node's queue refused (load shedding). */
  onOverload (event: OverloadEvent): void
  onCacheLookup (method: string, outcome: CacheOutcome): void
  /** A miss of the in-process cache that asked Redis. */
  onSharedLookup (method: string, outcome: SharedOutcome): void
  onRedisOperation (event: RedisOperationEvent): void
  /**
   * What counts a GET of `route` that the fast path answered (fast-path/fast-path.ts): like any request,
   * and apart. Its series are looked up once, when the fast path records the route's answer.
   */
  fastAnswerCounter (route: string): (status: 200 | 304, seconds: number) => void
  /** Where the pool gauges read from at scrape time. */
  watchClient (peek: () => PocketNetProxyApi | undefined): void
  /** What GET /metrics answers, in `registry.contentType`: by default `registry.metrics()`. */
  scrape (): Promise<string>
  /**
   * Makes GET /metrics answer `scrape` instead. The seam for a cluster worker, which answers the
   * whole cluster's metrics (src/cluster/cluster-metrics.ts): the process entry sets it once the app
   * is built, so that neither this folder nor the app knows about the cluster.
   */
  scrapeWith (scrape: () => Promise<string>): void
}

/**
 * Node's own metrics (prom-client's defaults: CPU, memory, event-loop delay, GC) describe the
 * process, not an app, and their collectors never stop (a GC observer, an event-loop delay
 * histogram sampling every 10 ms): made once per process and registered in each app's registry
 * too. Collected per app, they kept every app a process ever built alive (the testkit's, a test
 * suite's) and sampling, through prom-client's observer.
 */
let processMetrics: Registry | undefined

function nodeMetrics (): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics })
  }
  return processMetrics
}

export function createMetrics (): Metrics {
  const registry = new Registry()
  const node = nodeMetrics()
  for (const { name } of node.getMetricsAsArray()) registry.registerMetric(node.getSingleMetric(name)!)
  const upstream = new CounterFamily('pocketnet_upstream_attempts_total',
    'RPC attempts on Pocketnet nodes, by node (position in POCKETNET_NODES), method and outcome',
    ['node', 'method', 'outcome'], registry)
  const upstreamDuration = new HistogramFamily('pocketnet_upstream_attempt_duration_seconds',
    'Duration of RPC attempts on Pocketnet nodes', ['method'],
    [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registry)
  const queueWait = new HistogramFamily('pocketnet_node_queue_wait_seconds',
    'Time calls waited for a free slot on a node before they were sent, or refused', ['node'],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registry)
  const shed = new CounterFamily('pocketnet_shed_calls_total',
    'Calls refused because every node was at capacity (answered 503), by node (where the call would have waited least), method and reason (full: refused at once; expired: waited until it could no longer be answered in time)',
    ['node', 'method', 'reason'], registry)
  const cache = new CounterFamily('pocketnet_cache_lookups_total',
    'Answer cache lookups by method and outcome (hit, stale: answered while a refresh runs, miss, shared: joined a call in flight)',
    ['method', 'outcome'], registry)
  const cacheSeries = new Map<string, Record<CacheOutcome, { value: number }>>()
  const shared = new CounterFamily('pocketnet_shared_cache_lookups_total',
    'Misses of the in-process cache that asked Redis, by method and outcome (hit: another instance\'s answer, miss: fetched and shared, joined: waited for another instance\'s call, unshared: Redis unavailable or the wait ran out)',
    ['method', 'outcome'], registry)
  const redisOperations = new CounterFamily('redis_operations_total',
    'Redis operations by operation (lookup, settle, rate) and outcome (ok, error, timeout, skipped: Redis unavailable or backing off)',
    ['operation', 'outcome'], registry)
  const redisDuration = new HistogramFamily('redis_operation_duration_seconds', 'Duration of Redis operations that were tried', ['operation'],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1], registry)
  const inFlight = { value: 0 }
  let peek: () => PocketNetProxyApi | undefined = () => undefined
  let scrape = async (): Promise<string> => await registry.metrics()
  // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests being served',
    registers: [registry],
    // Across cluster workers (cluster/cluster-metrics.ts): the requests each one serves add up.
    aggregator: 'sum',
    collect () {
      this.set(inFlight.value)
    },
  })
  // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
  new Gauge({
    name: 'pocketnet_nodes_usable',
    help: 'Nodes that answered, with a closed circuit, in step with the agreed chain tip',
    registers: [registry],
    // Every worker probes the same nodes: their sum would count each node once per worker.
    aggregator: 'max',
    collect () {
      this.set(peek()?.nodes().filter(node => node.usable).length ?? 0)
    },
  })
  // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
  new Gauge({
    name: 'pocketnet_best_height',
    help: 'Highest chain height any node reported',
    registers: [registry],
    aggregator: 'max',
    collect () {
      this.set(peek()?.bestHeight ?? 0)
    },
  })
  // Per node, read at scrape time. Across cluster workers they add up: each worker has its own
  // slots on the same nodes.
  for (const [name, help, read] of [
    ['pocketnet_node_queue_length', 'Calls waiting for a free slot on each node', 'queued'],
    ['pocketnet_node_in_flight', 'Calls sent to each node and not yet answered', 'inFlight'],
    ['pocketnet_node_concurrency_limit', 'Calls each node is given at once now (adapts between POCKETNET_NODE_THREADS and POCKETNET_CONNECTIONS_PER_NODE)', 'concurrencyLimit'],
  ] as const) {
    // eslint-disable-next-line no-new -- registered by the constructor; read at scrape time
    new Gauge({
      name,
      help,
      labelNames: ['node'],
      registers: [registry],
      aggregator: 'sum',
      collect () {
        this.reset()
        for (const node of peek()?.nodes() ?? []) this.set({ node: node.name }, node[read])
      },
    })
  }
  const httpRequests = new CounterFamily('http_requests_total', 'HTTP requests by route pattern, method and status',
    ['route', 'method', 'status'], registry)
  const httpDuration = new HistogramFamily('http_request_duration_seconds', 'HTTP request duration by route pattern', ['route'],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registry)
  const fastAnswers = new CounterFamily('http_fast_path_answers_total',
    'Requests answered by the fast path (a fresh cached answer replayed before Fastify), by route pattern; also in http_requests_total',
    ['route'], registry)
  return {
    registry,
    httpRequests,
    httpDuration,
    inFlight,
    onAttempt (event) {
      upstream.inc(event.node, event.method, event.outcome)
      upstreamDuration.observe(upstreamDuration.series(event.method), event.durationMs / 1000)
      queueWait.observe(queueWait.series(event.node), event.queuedMs / 1000)
    },
    onOverload (event) {
      shed.inc(event.node, event.method, event.reason)
      if (event.reason === 'expired') queueWait.observe(queueWait.series(event.node), event.waitedMs / 1000)
    },
    onCacheLookup (method, outcome) {
      // Once per request on a cache hit: the series are looked up once per method.
      let series = cacheSeries.get(method)
      if (series === undefined) {
        series = { hit: cache.series(method, 'hit'), stale: cache.series(method, 'stale'), miss: cache.series(method, 'miss'), shared: cache.series(method, 'shared') }
        cacheSeries.set(method, series)
      }
      series[outcome].value++
    },
    onSharedLookup (method, outcome) {
      shared.inc(method, outcome)
    },
    onRedisOperation ({ operation, outcome, seconds }) {
      redisOperations.inc(operation, outcome)
      if (outcome !== 'skipped') redisDuration.observe(redisDuration.series(operation), seconds)
    },
    fastAnswerCounter (route) {
      const ok = httpRequests.series(route, 'GET', '200')
      const notModified = httpRequests.series(route, 'GET', '304')
      const duration = httpDuration.series(route)
      const fast = fastAnswers.series(route)
      return (status, seconds) => {
        (status === 200 ? ok : notModified).value++
        httpDuration.observe(duration, seconds)
        fast.value++
      }
    },
    watchClient (next) {
      peek = next
    },
    scrape: () => scrape(),
    scrapeWith (next) {
      scrape = next
    },
  }
}
