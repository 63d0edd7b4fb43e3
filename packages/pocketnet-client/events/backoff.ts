/**
 * How long to wait before the next attempt to hold a node socket: doubling from `minMs` up to
 * `maxMs`, with "equal jitter" (half the delay fixed, half random) so that instances that lost
 * the same node do not all come back at the same moment.
 */
export interface BackoffOptions {
  minMs: number
  maxMs: number
  /** A number in [0, 1). */
  random: () => number
}

/** The delay before attempt `failures` + 1, after `failures` failures in a row (from 1). */
export function backoffDelayMs (failures: number, options: BackoffOptions): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30)
  const delay = Math.min(options.maxMs, options.minMs * 2 ** exponent)
  return Math.round(delay / 2 + options.random() * delay / 2)
}
