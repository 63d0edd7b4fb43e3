/**
 * Tells a second signal from the first one delivered twice. Ctrl+C in a terminal signals the whole
 * foreground process group, and the tools in it pass the signal on to their child as well (npm
 * forwards it under `npm start`, `tsx watch` too), so node gets the same SIGINT twice a few
 * milliseconds apart: the cluster's primary, or the single process. Taken for a second signal, one
 * Ctrl+C would drop the requests in flight; a person who means a second one presses again later
 * than `sameWithinMs`.
 */
export type SignalKind = 'first' | 'again' | 'second'

export interface SignalCountOptions {
  /** A repeat of the first signal within this many milliseconds is the same one. Default 500. */
  sameWithinMs?: number
  /** Milliseconds, monotonic; tests pass a manual clock. */
  now?: () => number
}

export class SignalCount {
  readonly #sameWithinMs: number
  readonly #now: () => number
  #first: { signal: string, at: number } | undefined

  constructor (options: SignalCountOptions = {}) {
    this.#sameWithinMs = options.sameWithinMs ?? 500
    this.#now = options.now ?? (() => performance.now())
  }

  /** Records a signal: the first, the first again (relayed), or a second one. */
  record (signal: string): SignalKind {
    const now = this.#now()
    if (this.#first === undefined) {
      this.#first = { signal, at: now }
      return 'first'
    }
    return signal === this.#first.signal && now - this.#first.at < this.#sameWithinMs ? 'again' : 'second'
  }
}
