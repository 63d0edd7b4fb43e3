/**
 * Timers and randomness as seams: the pool and the node slots take them as options, so that
 * tests drive hedging, cooldowns and queue expiry on a clock they move by hand, and pick
 * nodes with a random source they choose, instead of waiting or hoping.
 */

/** An opaque handle from {@link Timers.setTimeout}. */
export type TimerHandle = { readonly timer: unknown }

export interface Timers {
  /** Calls `callback` once, `ms` from now. A pending timer never keeps the process alive. */
  setTimeout (callback: () => void, ms: number): TimerHandle
  clearTimeout (handle: TimerHandle | undefined): void
}

/** Node's timers, unreferenced: what keeps the process alive is the work in flight, not its timers. */
export const REAL_TIMERS: Timers = {
  setTimeout (callback, ms) {
    const timer = setTimeout(callback, ms)
    timer.unref()
    return { timer }
  },
  clearTimeout (handle) {
    if (handle !== undefined) clearTimeout(handle.timer as NodeJS.Timeout)
  },
}
