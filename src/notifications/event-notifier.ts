/**
 * The outbox consumer `notify`: the app's events that are worth telling (event-notices.ts) become
 * notifications. Its rows are written in the transaction that made each event (an invoice's
 * confirmation, a grant), so none is lost across a crash; a row can come twice (a lease that
 * lapsed), and the notice's id, fixed by the event, makes the second send a `duplicate`.
 *
 * A send that is `rate_limited` (the user was told something else a moment ago: a purchase is
 * both confirmed and granted) is tried again later, with backoff, and given up after a day or so;
 * every other status is final: `not_registered` users simply did not opt in.
 */
import { REAL_TIMERS, type PocketnetNetwork, type Timers } from 'pocketnet-client'
import { OutboxConsumer } from '../outbox/outbox-consumer.js'
import { RetryPolicy, type RetrySchedule } from '../outbox/retry-policy.js'
import type { ClaimedEvent, PaymentOutbox } from '../payments/payment-outbox.js'
import { noticeOf, NOTIFY_CONSUMER, type EventNoticeSettings, type NoticeCounts } from './event-notices.js'
import type { NotificationsService } from './notifications-service.js'

/** Past the user's interval first, doubling to an hour: through a day's limit, then given up. */
export const NOTICE_RETRY: RetrySchedule = { firstDelayMs: 30_000, maxDelayMs: 3_600_000, jitter: 0.2, maxAttempts: 30 }

export interface EventNotifierLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

export interface EventNotifierOptions {
  outbox: PaymentOutbox
  notifications: NotificationsService
  settings: EventNoticeSettings
  network: PocketnetNetwork
  log: EventNotifierLog
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number
  timers?: Timers
  /** In [0, 1), the retries' jitter. Default Math.random. */
  random?: () => number
  retry?: RetrySchedule
  /** Where what is told is counted (the metrics read it). */
  counts: NoticeCounts
}

/** The send was refused for now: the row is tried again after the retry's delay. */
class NoticeRateLimitedError extends Error {}

export class EventNotifier {
  readonly #counts: NoticeCounts
  readonly #consumer: OutboxConsumer<ClaimedEvent>

  constructor (options: EventNotifierOptions) {
    const { notifications, settings, network, log } = options
    this.#counts = options.counts
    this.#consumer = new OutboxConsumer<ClaimedEvent>({
      consumer: NOTIFY_CONSUMER,
      outbox: options.outbox,
      handle: async event => {
        const notice = noticeOf(event, settings, network)
        if (notice === undefined) return
        const { kind, notification } = notice
        // Not waited for: the push has its own outbox; this one only needs it accepted.
        const [result] = (await notifications.send(notification, { waitMs: 0 })).results
        const status = result?.status ?? 'failed'
        this.#counts.told[kind][status]++
        log.info({ notificationId: notification.id, address: notification.to, kind, status }, 'Notifications: an event was told')
        if (status === 'rate_limited') throw new NoticeRateLimitedError(`${notification.id} to ${notification.to} was rate limited`)
      },
      retry: new RetryPolicy(options.retry ?? NOTICE_RETRY, options.random ?? Math.random),
      batchSize: 50,
      // A send is a transaction or two: far within this.
      leaseMs: 30_000,
      now: options.now ?? Date.now,
      timers: options.timers ?? REAL_TIMERS,
      onFailed: (event, err, decision) => {
        const fields = { event: event.idempotencyKey, attempts: event.attempts, err: { message: err instanceof Error ? err.message : String(err) } }
        if (decision.giveUp) log.warn(fields, 'Notifications: an event could not be told; given up')
        else log.warn({ ...fields, retryInMs: decision.retryInMs }, 'Notifications: an event could not be told yet; tried again later')
      },
      onOutboxError: err => {
        log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the events to tell could not be read from the outbox; tried again later')
      },
    })
  }

  /** Looks at the outbox now (this instance wrote an event to tell, or it just started). */
  wake (): void {
    this.#consumer.wake()
  }

  /** Resolves once no pass runs (tests). */
  async whenIdle (): Promise<void> {
    await this.#consumer.whenIdle()
  }

  async close (): Promise<void> {
    await this.#consumer.close()
  }
}
