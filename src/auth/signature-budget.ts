/**
 * How many signature checks this process makes per second, at most: a token bucket holding one
 * second's worth. Each check is a millisecond or more of one core's time, taken on the event
 * loop (bench/results.md, "Sign-in"), so a flood of forged signatures, each checked, would slow
 * every other request of the process. Past the budget, sign-in answers 503 at once; the rest
 * of the API is unaffected. Per process, like the CPU it protects.
 */
export class SignatureBudget {
  readonly #perSecond: number
  readonly #now: () => number
  #tokens: number
  #updatedAt: number

  /** @param now milliseconds (tests inject it) */
  constructor (perSecond: number, now: () => number) {
    this.#perSecond = perSecond
    this.#now = now
    this.#tokens = perSecond
    this.#updatedAt = now()
  }

  /** True, and one check spent, when the budget allows one more now. */
  take (): boolean {
    const now = this.#now()
    this.#tokens = Math.min(this.#perSecond, this.#tokens + (now - this.#updatedAt) * this.#perSecond / 1000)
    this.#updatedAt = now
    if (this.#tokens < 1) return false
    this.#tokens--
    return true
  }
}
