/**
 * The notifications' metrics, read when Prometheus scrapes (no work per notification): the
 * recipients of `send` by status and the push attempts by outcome, of this instance; and the
 * deliveries not made yet, across instances (pending, given up).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import { NOTICE_KINDS, type NoticeCounts } from './event-notices.js'
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
    help: 'Push attempts through the users\' Bastyon proxies by this instance, by outcome: delivered, failed (retried later unless it was the last), given_up (the last attempt failed)',
    labelNames: ['outcome'],
    registers: [registry],
    collect () {
      deliveries.reset()
      deliveries.inc({ outcome: 'delivered' }, service.counts.delivered)
      deliveries.inc({ outcome: 'failed' }, service.counts.failed)
      deliveries.inc({ outcome: 'given_up' }, service.counts.givenUp)
    },
  })
  const backlog = new Gauge({
    name: 'notifications_backlog',
    help: 'Pushes not delivered, across instances, by state: pending (to be tried, now or after a backoff), given_up (every attempt failed); absent until the database is open',
    labelNames: ['state'],
    registers: [registry],
    // Every worker of a cluster reads the same database: one worker's count is the count.
    aggregator: 'max',
    async collect () {
      try {
        const counts = await service.backlog()
        if (counts === undefined) return
        backlog.set({ state: 'pending' }, counts.pending)
        backlog.set({ state: 'given_up' }, counts.givenUp)
      } catch {
        // The database did not answer: the last values stand rather than failing the whole scrape.
      }
    },
  })
}
