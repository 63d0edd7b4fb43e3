/**
 * The event loop's mean delay over the last second, as @fastify/under-pressure measures it (a
 * histogram sampled every 10 ms, less that resolution), without the rest of that plugin's sampler:
 * it also calls process.memoryUsage(), which reads /proc/self/stat and so throws EMFILE when the
 * process has no descriptor left, from a timer, where nothing catches it (issue #39). The
 * histogram needs no descriptor.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'

const RESOLUTION_MS = 10
const SAMPLE_INTERVAL_MS = 1000

export class EventLoopDelay {
  readonly #histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  #timer: NodeJS.Timeout | undefined
  #delayMs = 0

  /** Milliseconds, as of the last sample; Infinity when the loop was blocked through a whole sample. */
  get delayMs (): number {
    return this.#delayMs
  }

  start (): void {
    this.#histogram.enable()
    this.#timer = setInterval(() => this.#sample(), SAMPLE_INTERVAL_MS).unref()
  }

  stop (): void {
    clearInterval(this.#timer)
    this.#histogram.disable()
  }

  #sample (): void {
    // No sample at all in the interval (mean NaN): the loop never turned.
    const mean = this.#histogram.mean / 1e6 - RESOLUTION_MS
    this.#delayMs = Number.isNaN(mean) ? Infinity : Math.max(0, mean)
    this.#histogram.reset()
  }
}
