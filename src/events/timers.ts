/**
 * The timers the live events wait on (keep-alives, long-polls, the shared log's catch-up), as a
 * seam: tests pass a clock they move by hand (test/helpers/manual-clock.ts) instead of waiting.
 * The same shape as lib's `Timers` (lib/timers.ts), which the client package does not export.
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
