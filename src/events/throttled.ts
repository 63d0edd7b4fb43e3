/**
 * A task run when asked, at once when it has not run lately, never twice at once, and at most
 * once per `gapMs`: asks that come while it runs or rests make one more run at the end of the
 * rest. For work whose cost grows with how often something changes (subscribers coming and
 * going on a busy instance), where only the latest state matters.
 *
 * A CoalescingRun whose run is the task and then the rest: an ask during either makes one more.
 */
import { CoalescingRun, type TimerHandle, type Timers } from 'pocketnet-client'

export class Throttled {
  readonly #runs: CoalescingRun
  readonly #timers: Timers
  /** The rest in progress, ended early by close(). */
  #rest: { timer: TimerHandle, end: () => void } | undefined
  #closed = false

  /** `task` must not reject (what it rejects with is dropped). */
  constructor (task: () => Promise<void>, gapMs: number, timers: Timers) {
    this.#timers = timers
    this.#runs = new CoalescingRun(async () => {
      await task().catch(() => {})
      if (this.#closed) return
      await new Promise<void>(resolve => {
        const end = (): void => {
          this.#rest = undefined
          resolve()
        }
        this.#rest = { timer: timers.setTimeout(end, gapMs), end }
      })
    })
  }

  request (): void {
    this.#runs.request()
  }

  /** No more runs; resolves once the run in flight, if any, has ended. */
  async close (): Promise<void> {
    this.#closed = true
    const closed = this.#runs.close()
    if (this.#rest !== undefined) {
      this.#timers.clearTimeout(this.#rest.timer)
      this.#rest.end()
    }
    await closed
  }
}
