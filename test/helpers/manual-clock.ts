/** A clock the test moves by hand, for the `clock` options of the client, the pool and the rate limit. */
export interface ManualClock {
  /** Milliseconds; starts at 1000 and moves only with advance(). */
  now: () => number
  advance (ms: number): void
}

export function manualClock (): ManualClock {
  let now = 1000
  return { now: () => now, advance (ms) { now += ms } }
}
