/**
 * When the primary replaces a worker that died, and when it stops trying. Each death within the
 * window waits twice as long as the one before it (100 ms, 200 ms, 400 ms, ...), so a worker that
 * dies once is back at once and a crash loop does not spin a core; `maxCrashes` deaths within
 * `windowMs` mean the deploy itself is broken (a bad build, a port taken), and looping on it
 * forever would only hide that from the orchestrator, which restarts a process that exits.
 */
import { backoffDelayMs } from 'pocketnet-client'

export interface RestartPolicyOptions {
  /** Deaths within `windowMs` that make the primary give up. Default 5. */
  maxCrashes?: number
  /** Default 30 000. */
  windowMs?: number
  /** The wait after the first death in the window. Default 100. */
  firstDelayMs?: number
  /** Default 10 000. */
  maxDelayMs?: number
  /** Milliseconds, monotonic; tests pass a manual clock. */
  now?: () => number
}

export class RestartPolicy {
  readonly maxCrashes: number
  readonly windowMs: number
  readonly #firstDelayMs: number
  readonly #maxDelayMs: number
  readonly #now: () => number
  /** When the deaths within the window happened, oldest first. */
  readonly #crashes: number[] = []

  constructor (options: RestartPolicyOptions = {}) {
    this.maxCrashes = options.maxCrashes ?? 5
    this.windowMs = options.windowMs ?? 30_000
    this.#firstDelayMs = options.firstDelayMs ?? 100
    this.#maxDelayMs = options.maxDelayMs ?? 10_000
    this.#now = options.now ?? (() => performance.now())
  }

  /** Deaths within the window, as of the last one recorded. */
  get recentCrashes (): number {
    return this.#crashes.length
  }

  /**
   * Records a worker's death now. Returns how long to wait before forking its replacement, or
   * undefined when this death spends the budget and the primary should give up.
   */
  crashed (): number | undefined {
    const now = this.#now()
    while (this.#crashes.length > 0 && now - (this.#crashes[0] as number) >= this.windowMs) this.#crashes.shift()
    this.#crashes.push(now)
    if (this.#crashes.length >= this.maxCrashes) return undefined
    // No jitter: one primary restarts its own workers, nothing else comes back with them.
    return backoffDelayMs(this.#crashes.length, { minMs: this.#firstDelayMs, maxMs: this.#maxDelayMs, jitter: 'none' })
  }
}
