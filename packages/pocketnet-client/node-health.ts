/**
 * What the pool knows about one node, and the arithmetic of rating it: latency and error-rate
 * averages, and a circuit breaker (where its height stands is chain-tip.ts's). Pure code with an injected clock, so it is
 * tested without servers or sleeps.
 */
import { backoffDelayMs } from './backoff.js'

/**
 * - `closed`: the node takes traffic.
 * - `open`: it failed; no traffic until `retryAt`, when a background probe tries it again.
 * - `half-open`: the probe is under way; one success closes the circuit, one failure opens it longer.
 */
export type CircuitState = 'closed' | 'open' | 'half-open'

export interface HealthPolicy {
  /** Weight of the newest sample in the averages (0..1). */
  smoothing: number
  /** First wait before an open circuit is probed again; doubles on each failed probe. */
  baseCooldownMs: number
  maxCooldownMs: number
}

export const DEFAULT_HEALTH_POLICY: HealthPolicy = {
  smoothing: 0.2,
  baseCooldownMs: 1000,
  maxCooldownMs: 30_000,
}

// A node that has not answered yet is rated as slow as the hedging delay allows (1 s): it
// takes traffic only when no answering node is left, so a node that hangs from the start
// costs nothing, while its first probe answer rates it for real.
const UNKNOWN_LATENCY_MS = 1000
/**
 * How much recent failures weigh in a node's rating: a node whose error rate is 1 (every recent
 * outcome failed) is rated five times slower than its latency.
 */
const ERROR_RATE_WEIGHT = 4
/** How much each call already in flight on a node weighs: four in flight double its rating. */
const IN_FLIGHT_WEIGHT = 0.25

/**
 * Each field changes only through the methods below, so that every change of state has a name:
 * recordSuccess, recordOvertaken, recordFailure, beginProbe, noteReport.
 */
export class NodeHealth {
  #circuit: CircuitState = 'closed'
  #seen = false
  #latencyMs: number | undefined
  #errorRate = 0
  #consecutiveFailures = 0
  #retryAt = 0
  #height: number | undefined
  #blockHash: string | undefined
  #version: string | undefined
  #lastError: string | undefined
  readonly #policy: HealthPolicy

  constructor (policy: HealthPolicy = DEFAULT_HEALTH_POLICY) {
    this.#policy = policy
  }

  get circuit (): CircuitState { return this.#circuit }
  /** Whether the node has answered at least once. */
  get seen (): boolean { return this.#seen }
  /** Moving average of its answers' latency; undefined until it answers. */
  get latencyMs (): number | undefined { return this.#latencyMs }
  /** Average of recent outcomes, 0 (all good) to 1 (all failed). */
  get errorRate (): number { return this.#errorRate }
  get consecutiveFailures (): number { return this.#consecutiveFailures }
  /** When an open circuit may be probed again (clock milliseconds). */
  get retryAt (): number { return this.#retryAt }
  /** Its latest report of its chain height. */
  get height (): number | undefined { return this.#height }
  /** The hash of the block at that height, as it reported it (undefined when it gave none we could read). */
  get blockHash (): string | undefined { return this.#blockHash }
  get version (): string | undefined { return this.#version }
  /** What the last failure was, in our words (an error code), never the node's own text. */
  get lastError (): string | undefined { return this.#lastError }

  /** What the node said of itself (getnodeinfo): its latest word replaces the last, lower or not. */
  noteReport (version: string, height: number, blockHash?: string): void {
    this.#version = version
    this.#height = height
    this.#blockHash = blockHash
  }

  /** An open circuit's cooldown ended: one probe goes (half-open), whose outcome closes or reopens it. */
  beginProbe (): void {
    if (this.#circuit === 'open') this.#circuit = 'half-open'
  }

  recordSuccess (latencyMs: number): void {
    const { smoothing } = this.#policy
    this.#seen = true
    this.#latencyMs = this.#latencyMs === undefined ? latencyMs : this.#latencyMs + smoothing * (latencyMs - this.#latencyMs)
    this.#errorRate -= smoothing * this.#errorRate
    this.#consecutiveFailures = 0
    this.#circuit = 'closed'
  }

  /**
   * The node was still working after `elapsedMs` when another node answered the same call: a
   * lower bound of its latency, so that a node that hangs or crawls is rated down before its
   * probe times out.
   */
  recordOvertaken (elapsedMs: number): void {
    if (this.#latencyMs === undefined || elapsedMs > this.#latencyMs) {
      this.#latencyMs = this.#latencyMs === undefined ? elapsedMs : this.#latencyMs + this.#policy.smoothing * (elapsedMs - this.#latencyMs)
    }
  }

  /** A failure opens the circuit at once: a dead node should cost nothing once detected. */
  recordFailure (reason: string, now: number): void {
    const { smoothing, baseCooldownMs, maxCooldownMs } = this.#policy
    this.#errorRate += smoothing * (1 - this.#errorRate)
    this.#consecutiveFailures++
    this.#lastError = reason
    this.#circuit = 'open'
    this.#retryAt = now + backoffDelayMs(this.#consecutiveFailures, { minMs: baseCooldownMs, maxMs: maxCooldownMs, jitter: 'none' })
  }

  /** Lower is better: expected latency, inflated by recent errors and by the calls it has in flight now. */
  score (inFlight: number): number {
    const latency = this.#latencyMs ?? UNKNOWN_LATENCY_MS
    return (latency + 1) * (1 + ERROR_RATE_WEIGHT * this.#errorRate) * (1 + IN_FLIGHT_WEIGHT * inFlight)
  }
}

/** Recent latencies of successful attempts, for the hedging delay (a high percentile). */
export class LatencyWindow {
  readonly #samples: Float64Array
  #count = 0
  #next = 0
  #cached: number | undefined

  constructor (size = 256) {
    this.#samples = new Float64Array(size)
  }

  add (latencyMs: number): void {
    this.#samples[this.#next] = latencyMs
    this.#next = (this.#next + 1) % this.#samples.length
    if (this.#count < this.#samples.length) this.#count++
    // Recomputed lazily, at most once per 32 samples: sorting on every call would cost more than it saves.
    if (this.#next % 32 === 0) this.#cached = undefined
  }

  get size (): number {
    return this.#count
  }

  /** The 95th percentile of the window, or undefined when it is empty. */
  p95 (): number | undefined {
    if (this.#count === 0) return undefined
    if (this.#cached === undefined || this.#count < 32) {
      const sorted = this.#samples.slice(0, this.#count).sort()
      this.#cached = sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))]
    }
    return this.#cached
  }
}
