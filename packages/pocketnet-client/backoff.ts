/**
 * How long to wait before trying again after failures in a row: the one backoff schedule of the
 * client and the service. A delay grows from `minMs` with each failure (doubling, or by `minMs`
 * each time) up to `maxMs`, then is moved at random (jitter) so that many clients that failed
 * together do not all come back at the same moment.
 *
 * The schedules it gives, with their users' numbers (tested in test/pocketnet-client/backoff.test.ts):
 * - the node event source's socket: from `reconnectMinMs` (1 s), doubling to `reconnectMaxMs`
 *   (60 s), half of each delay random (`equal`);
 * - a node's circuit (node-health.ts): from 1 s, doubling to 30 s, no jitter;
 * - a dead worker's replacement (src/cluster/restart-policy.ts): from 100 ms, doubling to 10 s, no jitter;
 * - the Redis connection (redis/redis-link.ts): 100 ms more per attempt, up to 2 s, no jitter;
 * - the payments' retries (src/payments/): from 1 s, doubling to 5 min, `equal`; a webhook's:
 *   from a minute, doubling to 8 h, moved by up to a quarter either way (`{ spread: 0.25 }`).
 */

/**
 * What is random in each delay:
 * - `equal`: half of it fixed, half random, in [delay / 2, delay);
 * - `none`: nothing, the delay as it grew;
 * - `{ spread }`: up to that fraction of it either way, in [delay × (1 − spread), delay × (1 + spread)).
 */
export type BackoffJitter = 'equal' | 'none' | { spread: number }

export interface BackoffOptions {
  /** The delay after the first failure, before jitter. */
  minMs: number
  /** The longest delay, before jitter. */
  maxMs: number
  /** `doubling` (default): minMs × 2^(failures − 1); `linear`: minMs × failures. */
  growth?: 'doubling' | 'linear'
  /** Default `equal`. */
  jitter?: BackoffJitter
  /** A number in [0, 1), for the jitter. Default Math.random. */
  random?: () => number
}

/** Past this many doublings every delay is at its maximum (and 2 ** n stays finite). */
const MAX_DOUBLINGS = 52

/**
 * The delay before attempt `failures` + 1, after `failures` failures in a row (from 1; less counts
 * as 1), in whole milliseconds.
 */
export function backoffDelayMs (failures: number, options: BackoffOptions): number {
  const { minMs, maxMs, growth = 'doubling', jitter = 'equal', random = Math.random } = options
  const count = Math.max(failures, 1)
  const grown = growth === 'linear' ? minMs * count : minMs * 2 ** Math.min(count - 1, MAX_DOUBLINGS)
  const delay = Math.min(maxMs, grown)
  if (jitter === 'none') return Math.round(delay)
  if (jitter === 'equal') return Math.round(delay / 2 + random() * delay / 2)
  return Math.round(delay * (1 - jitter.spread + 2 * jitter.spread * random()))
}
