/**
 * The payments' metrics, read when Prometheus scrapes (no work per event): whether this instance
 * holds the watcher's turn, how often a node contradicted a payment, the payments sighted and not
 * read yet and the reads that failed, and with webhooks on, the
 * attempts by outcome and the events not delivered yet (still to be tried, and given up).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { PaymentCrossCheck } from './cross-check.js'
import type { PaymentOutbox } from './payment-outbox.js'
import type { PaymentSightings } from './payment-sightings.js'
import type { SightingReader } from './sighting-reader.js'
import type { WatcherTurn } from './watcher-turn.js'
import { WEBHOOK_CONSUMER, type WebhookSender } from './webhook-sender.js'

export function registerPaymentMetrics (registry: Registry, turn: WatcherTurn, webhooks?: { sender: WebhookSender, outbox: PaymentOutbox }, crossCheck?: PaymentCrossCheck, watched?: { sightings: PaymentSightings, reader: SightingReader }): void {
  // Summed over a cluster's workers: 1 on the machine whose worker holds it.
  new Gauge({ name: 'payments_watcher_lease_held', help: '1 while this instance holds the payments watcher\'s turn (re-checks and expiry on each block), else 0', registers: [registry], aggregator: 'sum', collect () { this.set(turn.held ? 1 : 0) } }) // eslint-disable-line no-new
  // Always there, 0 while one node decides (PAYMENT_CONFIRM_NODES=1, or one node configured).
  const disagreements = new Counter({
    name: 'payments_confirmation_disagreements_total',
    help: 'Answers of a node that contradicted a payment another node showed (no such transaction, another block, another memo, less paid), stopping its confirmation: a node that lies, or one on another chain (its name is in the warning logged)',
    registers: [registry],
    collect () {
      disagreements.reset()
      disagreements.inc(crossCheck?.disagreements ?? 0)
    },
  })
  if (watched !== undefined) {
    const { sightings, reader } = watched
    const unread = new Gauge({
      name: 'payments_sightings_unread',
      help: 'Payments to the receiver the node reported and whose transaction was not read yet, across instances: read a few at a time, failed reads tried again with backoff',
      registers: [registry],
      aggregator: 'max',
      async collect () {
        try {
          unread.set(await sightings.count())
        } catch {
          // The database did not answer: the last value stands.
        }
      },
    })
    const readFailures = new Counter({
      name: 'payments_sighting_read_failures_total',
      help: 'Reads of a sighted payment by this instance that failed (the node or the database) and are tried again later',
      registers: [registry],
      collect () {
        readFailures.reset()
        readFailures.inc(reader.failures)
      },
    })
  }
  if (webhooks === undefined) return
  const { sender, outbox } = webhooks
  const deliveries = new Counter({
    name: 'payments_webhook_deliveries_total',
    help: 'Payment webhook attempts by this instance, by outcome: delivered (2xx), failed (anything else, retried later unless it was the last), given_up (the last attempt failed: the event stays undelivered)',
    labelNames: ['outcome'],
    registers: [registry],
    collect () {
      deliveries.reset()
      deliveries.inc({ outcome: 'delivered' }, sender.counts.delivered)
      deliveries.inc({ outcome: 'failed' }, sender.counts.failed)
      deliveries.inc({ outcome: 'given_up' }, sender.counts.givenUp)
    },
  })
  const backlog = new Gauge({
    name: 'payments_webhook_backlog',
    help: 'Payment events not delivered to the webhook, across instances, by state: pending (to be tried, now or after a backoff), given_up (every attempt failed)',
    labelNames: ['state'],
    registers: [registry],
    // Every worker of a cluster reads the same database: one worker's count is the count.
    aggregator: 'max',
    async collect () {
      try {
        const counts = await outbox.backlog(WEBHOOK_CONSUMER)
        backlog.set({ state: 'pending' }, counts.pending)
        backlog.set({ state: 'given_up' }, counts.givenUp)
      } catch {
        // The database did not answer: the last values stand rather than failing the whole scrape.
      }
    },
  })
}
