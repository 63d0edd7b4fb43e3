/**
 * When a webhook that failed is tried again: exponential backoff from a minute, doubling, capped
 * at eight hours, each delay moved by up to a quarter either way (jitter, so that the retries of
 * many events failed together do not all come back at once). Twelve attempts span about a day
 * (docs/payments.md, "Webhooks"); after the last the event is given up. The numbers only: the
 * rule is every outbox consumer's (src/outbox/retry-policy.ts).
 */
import type { RetrySchedule } from '../outbox/retry-policy.js'

export const WEBHOOK_MAX_ATTEMPTS = 12

export const WEBHOOK_RETRY: Readonly<RetrySchedule> = {
  firstDelayMs: 60_000,
  maxDelayMs: 8 * 3_600_000,
  jitter: 0.25,
  maxAttempts: WEBHOOK_MAX_ATTEMPTS,
}
