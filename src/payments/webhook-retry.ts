/**
 * When a webhook that failed is tried again: exponential backoff from a minute, doubling, capped
 * at eight hours, each delay moved by up to a quarter either way (jitter, so that the retries of
 * many events failed together do not all come back at once). Twelve attempts span about a day
 * (docs/payments.md, "Webhooks"); after the last the event is given up.
 */

export const WEBHOOK_MAX_ATTEMPTS = 12
export const WEBHOOK_FIRST_RETRY_MS = 60_000
export const WEBHOOK_MAX_RETRY_MS = 8 * 3_600_000

/**
 * Milliseconds to wait after attempt `failedAttempt` (1, 2, 3 …) failed.
 * @param random in [0, 1): 0.5 gives the schedule's own delay
 */
export function webhookRetryDelayMs (failedAttempt: number, random: () => number): number {
  const base = Math.min(WEBHOOK_FIRST_RETRY_MS * 2 ** Math.max(0, failedAttempt - 1), WEBHOOK_MAX_RETRY_MS)
  return Math.round(base * (0.75 + 0.5 * random()))
}
