/**
 * Work that is asked for more often than it can run, where one run covers every ask made before
 * it started (reading what is new, sending what is due): `request()` runs it now unless it runs;
 * asked while it runs, it runs once more right after, however many times it was asked; never two
 * runs at once. close() stops further runs.
 *
 * A run that fails ends there: the asks that came during it are dropped, and the failure goes to
 * `onError`, which decides when to ask again (a retry after a delay): asking again at once would
 * spin on a failure that lasts.
 */

export interface CoalescingRunOptions {
  /** Told once the runs end with no ask left, the last one having succeeded. */
  onIdle?: () => void
  /** What a run threw; the runs stopped with it. Never called after close(). */
  onError?: (err: unknown) => void
}

export class CoalescingRun {
  readonly #work: () => Promise<void>
  readonly #onIdle: () => void
  readonly #onError: (err: unknown) => void
  /** Set before the work starts, so that an ask made by the work itself counts as made meanwhile. */
  #inFlight = false
  /** The runs in flight (this one and those asked during it), for whenIdle(). */
  #running: Promise<void> = Promise.resolve()
  /** Asked while a run was in flight: one more follows it. */
  #askedMeanwhile = false
  #closed = false

  constructor (work: () => Promise<void>, options: CoalescingRunOptions = {}) {
    this.#work = work
    this.#onIdle = options.onIdle ?? (() => {})
    this.#onError = options.onError ?? (() => {})
  }

  /** Whether a run is in flight. */
  get running (): boolean {
    return this.#inFlight
  }

  /** Runs the work now, or once more after the run in flight. Nothing after close(). */
  request (): void {
    if (this.#closed) return
    if (this.#inFlight) {
      this.#askedMeanwhile = true
      return
    }
    this.#inFlight = true
    this.#running = this.#runWhileAsked()
  }

  /** Resolves once no run is in flight (tests: before moving the clock on). */
  async whenIdle (): Promise<void> {
    while (this.#inFlight) await this.#running
  }

  /** No run after the one in flight, if any; resolves once that one has ended. Idempotent. */
  async close (): Promise<void> {
    this.#closed = true
    this.#askedMeanwhile = false
    await this.whenIdle()
  }

  /** Never rejects: a failure goes to onError. */
  async #runWhileAsked (): Promise<void> {
    let failure: { err: unknown } | undefined
    try {
      do {
        this.#askedMeanwhile = false
        await this.#work()
      } while (this.#askedMeanwhile && !this.#closed)
    } catch (err) {
      failure = { err }
    }
    this.#askedMeanwhile = false
    this.#inFlight = false
    // Told once nothing runs, so that a listener may ask again at once.
    if (this.#closed) return
    if (failure === undefined) this.#onIdle()
    else this.#onError(failure.err)
  }
}
