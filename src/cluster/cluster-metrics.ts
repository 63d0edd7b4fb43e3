/**
 * `GET /metrics` across the cluster (WEB_CONCURRENCY above 1): whichever worker takes the scrape
 * answers the metrics of every live worker, aggregated by prom-client's AggregatorRegistry
 * (counters and histograms summed, gauges as each one's `aggregator` says). Both sides of the
 * protocol live here, over the cluster's IPC channel:
 *
 *   worker → primary   { cmd: METRICS_REQUEST, id }   a scrape came in; `id` is the worker's own count
 *   primary            AggregatorRegistry.clusterMetrics(): prom-client asks every worker for its
 *                      registry as JSON ({ type: 'prom-client:getMetricsReq' }, answered by
 *                      prom-client's own listener in each worker) and aggregates the answers
 *   primary → worker   { cmd: METRICS_ANSWER, id, text } or { cmd: METRICS_ANSWER, id, error }
 *
 * Ours carry `cmd`, like the shutdown request (shutdown-requests.ts); prom-client's carry `type`:
 * no listener takes another's message. When the answer does not come within `waitMs` (a worker
 * stuck, just killed, or forked so recently that it had no listener yet and the request was lost:
 * prom-client then gives up after its own 5 s) or the primary reports an error, the worker answers
 * its own metrics alone, under a comment line that says so.
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'

const METRICS_REQUEST = 'bastyon-miniapp:metrics-request'
const METRICS_ANSWER = 'bastyon-miniapp:metrics-answer'

/** How long a worker waits for the cluster's metrics before it answers its own alone. */
export const CLUSTER_METRICS_WAIT_MS = 2000

interface MetricsRequest { cmd: typeof METRICS_REQUEST, id: number }
type Collected = { text: string } | { error: string }
type MetricsAnswer = { cmd: typeof METRICS_ANSWER, id: number } & Collected

function isMessage<M extends { cmd: string, id: number }> (message: unknown, cmd: M['cmd']): message is M {
  return (message as { cmd?: unknown } | null)?.cmd === cmd && typeof (message as { id?: unknown }).id === 'number'
}

/**
 * The primary's side: answers each worker's request with the cluster's metrics. `onError` hears
 * of a collection that failed (the asking worker then answers its own metrics).
 */
export function answerMetricsRequests (onError: (err: Error) => void): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage<MetricsRequest>(message, METRICS_REQUEST)) return
    aggregator.clusterMetrics().then(
      (text): Collected => ({ text }),
      (err: unknown): Collected => {
        const error = err instanceof Error ? err : new Error(String(err))
        onError(error)
        return { error: error.message }
      }
    ).then(collected => {
      const answer: MetricsAnswer = { cmd: METRICS_ANSWER, id: message.id, ...collected }
      // The asker may have exited meanwhile; it asked nothing anyone else waits for.
      if (worker.isConnected()) worker.send(answer, () => {})
    })
  })
}

/** A worker's side: answers prom-client's collection, and asks the primary on each scrape. */
export class WorkerMetrics {
  readonly #waitMs: number
  readonly #pending = new Map<number, (collected: Collected) => void>()
  #nextId = 0

  /**
   * From the worker's start, before its app exists: the primary's collection asks every worker,
   * and one still starting answers no metrics at once rather than keep the scrape waiting.
   */
  constructor (waitMs = CLUSTER_METRICS_WAIT_MS) {
    this.#waitMs = waitMs
    AggregatorRegistry.setRegistries([])
    // Constructing one is what installs prom-client's listener for the primary's collection.
    // eslint-disable-next-line no-new -- kept by prom-client's listener
    new AggregatorRegistry()
    process.on('message', message => {
      if (!isMessage<MetricsAnswer>(message, METRICS_ANSWER)) return
      const settle = this.#pending.get(message.id)
      this.#pending.delete(message.id)
      settle?.('text' in message ? { text: message.text } : { error: `the primary could not collect the cluster's: ${message.error}` })
    })
  }

  /** What GET /metrics answers in this worker, whose app keeps its metrics in `registry`. */
  scrapeOf (registry: Registry): () => Promise<string> {
    AggregatorRegistry.setRegistries(registry)
    return async () => {
      const collected = await this.#collect()
      if ('text' in collected) return collected.text
      // A comment line is valid in the text format, and tells whoever reads the scrape what it holds.
      return `# Only this worker's metrics (pid ${process.pid}): ${collected.error}\n${await registry.metrics()}`
    }
  }

  #collect (): Promise<Collected> {
    if (process.send === undefined || !process.connected) return Promise.resolve({ error: 'no channel to the primary' })
    const id = this.#nextId++
    return new Promise(resolve => {
      const settle = (collected: Collected): void => {
        clearTimeout(timer)
        this.#pending.delete(id)
        resolve(collected)
      }
      const timer = setTimeout(() => settle({ error: `the cluster's did not come within ${this.#waitMs} ms` }), this.#waitMs)
      this.#pending.set(id, settle)
      const request: MetricsRequest = { cmd: METRICS_REQUEST, id }
      process.send?.(request, undefined, undefined, err => {
        if (err) settle({ error: `could not ask the primary: ${err.message}` })
      })
    })
  }
}
