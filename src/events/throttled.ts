/**
 * A task run when asked, at once when it has not run lately, never twice at once, and at most
 * once per `gapMs`: asks that come while it runs or rests make one more run at the end of the
 * rest. For work whose cost grows with how often something changes (subscribers coming and
 * going on a busy instance), where only the latest state matters.
 */
import type { TimerHandle, Timers } from 'pocketnet-client'

export class Throttled {
  readonly #task: () => Promise<void>
  readonly #gapMs: number
  readonly #timers: Timers
  /** The run in flight, if any. */
  #running: Promise<void> | undefined
  #resting: TimerHandle | undefined
  #asked = false
  #closed = false

  /** `task` must not reject (what it rejects with is dropped). */
  constructor (task: () => Promise<void>, gapMs: number, timers: Timers) {
    this.#task = task
    this.#gapMs = gapMs
    this.#timers = timers
  }

  request (): void {
    if (this.#closed) return
    if (this.#running !== undefined || this.#resting !== undefined) {
      this.#asked = true
      return
    }
    this.#run()
  }

  /** No more runs; resolves once the run in flight, if any, has ended. */
  async close (): Promise<void> {
    this.#closed = true
    this.#timers.clearTimeout(this.#resting)
    this.#resting = undefined
    await this.#running
  }

  #run (): void {
    this.#asked = false
    this.#running = this.#task().catch(() => {}).finally(() => {
      this.#running = undefined
      if (this.#closed) return
      this.#resting = this.#timers.setTimeout(() => {
        this.#resting = undefined
        if (this.#asked && !this.#closed) this.#run()
      }, this.#gapMs)
    })
  }
}
