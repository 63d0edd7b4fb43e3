/**
 * The notifications' metrics, read when Prometheus scrapes (no work per notification): the
 * recipients of `send` by status and the delivery attempts by channel and outcome, of this
 * instance, and the settled ones it deleted past the retention; and the deliveries not made yet by
 * channel, across instances (pending, given up).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { NOTICE_KINDS, type NoticeCounts } from './event-notices.js'
import { CHANNEL_NAMES } from './notification-store.js'
import { SEND_STATUSES, type NotificationsService } from './notifications-service.js'

export function registerNotificationMetrics (registry: Registry, service: NotificationsService, counts: NoticeCounts): void {
  const notices = new Counter({
    name: 'notifications_event_notices_total',
    help: 'The app\'s events told by this instance (NOTIFY_ON_INVOICE_CONFIRMED, NOTIFY_ON_ENTITLEMENT_GRANTED, NOTIFY_BEFORE_EXPIRY_S), by kind (invoiceConfirmed, entitlementGranted, expiring) and status; an expiry already told or to a user who did not opt in is not counted again',
    labelNames: ['kind', 'status'],
    registers: [registry],
    collect () {
      notices.reset()
      for (const kind of NOTICE_KINDS) for (const status of SEND_STATUSES) notices.inc({ kind, status }, counts.told[kind][status])
    },
  })
  const scans = new Counter({
    name: 'notifications_expiry_scans_total',
    help: 'Scans for entitlements ending soon (NOTIFY_BEFORE_EXPIRY_S) finished by this instance; with several instances on one database, only the lease holder scans',
    registers: [registry],
    collect () {
      scans.reset()
      scans.inc(counts.expiryScans)
    },
  })
  const results = new Counter({
    name: 'notifications_send_results_total',
    help: 'Recipients of app.notifications.send (and POST /api/admin/notifications) on this instance, by status: sent, queued, failed, not_registered, duplicate, rate_limited',
    labelNames: ['status'],
    registers: [registry],
    collect () {
      results.reset()
      for (const status of SEND_STATUSES) results.inc({ status }, service.counts.results[status])
    },
  })
  const deliveries = new Counter({
    name: 'notifications_deliveries_total',
    help: 'Delivery attempts by this instance, by channel (bastyon: a push through the user\'s proxy; telegram: a message from the app\'s bot) and outcome: delivered, failed (retried later unless it was the last), given_up (no attempt left, or a refusal no retry changes)',
    labelNames: ['channel', 'outcome'],
    registers: [registry],
    collect () {
      deliveries.reset()
      for (const channel of CHANNEL_NAMES) {
        if (!service.channelNames.includes(channel)) continue
        const counts = service.counts.deliveries[channel]
        deliveries.inc({ channel, outcome: 'delivered' }, counts.delivered)
        deliveries.inc({ channel, outcome: 'failed' }, counts.failed)
        deliveries.inc({ channel, outcome: 'given_up' }, counts.givenUp)
      }
    },
  })
  const pruned = new Counter({
    name: 'notifications_deliveries_pruned_total',
    help: 'Settled deliveries (delivered or given up) this instance deleted once older than NOTIFY_RETENTION_S',
    registers: [registry],
    collect () {
      pruned.reset()
      pruned.inc(service.counts.pruned)
    },
  })
  const backlog = new Gauge({
    name: 'notifications_backlog',
    help: 'Deliveries not made, across instances, by channel and state: pending (to be tried, now or after a backoff), given_up; absent until the database is open',
    labelNames: ['channel', 'state'],
    registers: [registry],
    // Every worker of a cluster reads the same database: one worker's count is the count.
    aggregator: 'max',
    async collect () {
      try {
        const byChannel = await service.backlog()
        if (byChannel === undefined) return
        for (const [channel, counts] of byChannel) {
          backlog.set({ channel, state: 'pending' }, counts.pending)
          backlog.set({ channel, state: 'given_up' }, counts.givenUp)
        }
      } catch {
        // The database did not answer: the last values stand rather than failing the whole scrape.
      }
    },
  })
}
