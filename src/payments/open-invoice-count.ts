/**
 * How many invoices are open to payment, for the cap on anonymous ones: counted in the database
 * at most once a second, and the invoices this process made since added on, so that a flood of
 * requests costs one count a second rather than one each, and cannot pass the cap by much.
 */

const RECOUNT_MS = 1000

export class OpenInvoiceCount {
  readonly #count: () => Promise<number>
  readonly #now: () => number
  #known = 0
  #countedAtMs = -Infinity
  #counting: Promise<void> | undefined

  constructor (count: () => Promise<number>, now: () => number = Date.now) {
    this.#count = count
    this.#now = now
  }

  /** Whether at least `limit` invoices are open, this one to be made counted if not. */
  async atLeast (limit: number): Promise<boolean> {
    if (this.#now() - this.#countedAtMs >= RECOUNT_MS) {
      this.#counting ??= this.#count().then(count => {
        this.#known = count
        this.#countedAtMs = this.#now()
      }).finally(() => { this.#counting = undefined })
      await this.#counting
    }
    if (this.#known >= limit) return true
    this.#known++
    return false
  }
}
