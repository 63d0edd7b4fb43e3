/**
 * A one-shot cancel switch for one upstream attempt. The pool pulls it (hedge lost, call
 * settled, client closed) and so does the transport at its deadline; the transport listens.
 * An AbortController would do, but its signal is an EventTarget: making one, and adding and
 * removing its listeners, was a measurable share of a cold request's CPU (bench/results.md,
 * "Findings").
 */
export class Cancel {
  #cancelled = false
  #reason: unknown
  #listener: ((reason: unknown) => void) | undefined

  get cancelled (): boolean {
    return this.#cancelled
  }

  /** What the switch was pulled with; undefined while it was not. */
  get reason (): unknown {
    return this.#reason
  }

  /** Pulls the switch; only the first pull counts. */
  cancel (reason: unknown): void {
    if (this.#cancelled) return
    this.#cancelled = true
    this.#reason = reason
    const listener = this.#listener
    this.#listener = undefined
    listener?.(reason)
  }

  /** Sets the one listener, called once on the first pull; `undefined` removes it. */
  listen (listener: ((reason: unknown) => void) | undefined): void {
    this.#listener = listener
  }
}
