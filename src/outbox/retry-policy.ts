/**
 * When a row whose handling failed is tried again, or whether it is given up: exponential backoff
 * from a first delay, doubling after each failure, capped, each delay moved at random by up to a
 * fraction either way (jitter, so that rows that failed together do not all come back at once),
 * and, with `maxAttempts`, given up once that many attempts failed. The one retry rule of every
 * outbox consumer (outbox-consumer.ts); each brings its own numbers. The delays are
 * pocketnet-client's backoffDelayMs, the one backoff of the client and the service.
 */
import { backoffDelayMs } from 'pocketnet-client'

export interface RetrySchedule {
  /** The delay after the first failure. */
  firstDelayMs: number
  /** No delay is longer than this (before jitter). */
  maxDelayMs: number
  /** Each delay is multiplied by a factor in [1 − jitter, 1 + jitter): 0.25 moves it by up to a quarter either way. In [0, 1). */
  jitter: number
  /** Attempts after which a row that failed is given up. Undefined: tried for ever. */
  maxAttempts?: number
}

/** After a failure: try again in `retryInMs`, or give up. */
export type RetryDecision = { giveUp: false, retryInMs: number } | { giveUp: true }

export class RetryPolicy {
  readonly schedule: Readonly<RetrySchedule>
  readonly #random: () => number

  /** @param random in [0, 1): 0.5 gives the schedule's own delays, without jitter */
  constructor (schedule: RetrySchedule, random: () => number = Math.random) {
    const { firstDelayMs, maxDelayMs, jitter, maxAttempts } = schedule
    if (!(firstDelayMs >= 0 && maxDelayMs >= firstDelayMs)) throw new RangeError(`a retry schedule needs 0 ≤ firstDelayMs ≤ maxDelayMs, not ${firstDelayMs} and ${maxDelayMs}`)
    if (!(jitter >= 0 && jitter < 1)) throw new RangeError(`a retry schedule's jitter is in [0, 1), not ${jitter}`)
    if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && maxAttempts >= 1)) throw new RangeError(`a retry schedule's maxAttempts is a positive integer, not ${maxAttempts}`)
    this.schedule = { ...schedule }
    this.#random = random
  }

  /** What to do after attempt `attempts` (1, 2, 3 …, the one that just failed). */
  afterFailure (attempts: number): RetryDecision {
    const { maxAttempts } = this.schedule
    if (maxAttempts !== undefined && attempts >= maxAttempts) return { giveUp: true }
    return { giveUp: false, retryInMs: this.delayMs(attempts) }
  }

  /** Milliseconds to wait after attempt `failedAttempt` (1, 2, 3 …) failed, jitter included: the one backoff of the client and the service. */
  delayMs (failedAttempt: number): number {
    const { firstDelayMs, maxDelayMs, jitter } = this.schedule
    return backoffDelayMs(failedAttempt, { minMs: firstDelayMs, maxMs: maxDelayMs, jitter: { spread: jitter }, random: this.#random })
  }
}
