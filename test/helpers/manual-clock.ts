/**
 * A clock the test moves by hand, for the `clock` options of the client, the pool and the rate
 * limit, with timers on it (the pool's and the slots' `timers` option): a timer fires when
 * advance() moves the clock past its time, in time order, and never otherwise.
 */
import type { TimerHandle, Timers } from '../../packages/pocketnet-client/timers.js'

export interface ManualClock {
  /** Milliseconds; starts at 1000 and moves only with advance(). */
  now: () => number
  /** Moves the clock, firing the timers that fall due on the way, each at its own time. */
  advance (ms: number): void
  timers: Timers
  /** Timers set and not yet fired or cleared. */
  readonly pendingTimers: number
}

interface Pending { at: number, order: number, callback: () => void }

export function manualClock (): ManualClock {
  let now = 1000
  let order = 0
  const pending = new Set<Pending>()
  const timers: Timers = {
    setTimeout (callback, ms) {
      const timer: Pending = { at: now + Math.max(0, ms), order: order++, callback }
      pending.add(timer)
      return { timer }
    },
    clearTimeout (handle: TimerHandle | undefined) {
      if (handle !== undefined) pending.delete(handle.timer as Pending)
    },
  }
  return {
    now: () => now,
    advance (ms) {
      const until = now + ms
      for (;;) {
        let next: Pending | undefined
        for (const timer of pending) {
          if (timer.at <= until && (next === undefined || timer.at < next.at || (timer.at === next.at && timer.order < next.order))) next = timer
        }
        if (next === undefined) break
        pending.delete(next)
        now = Math.max(now, next.at)
        next.callback()
      }
      now = until
    },
    timers,
    get pendingTimers () { return pending.size },
  }
}
