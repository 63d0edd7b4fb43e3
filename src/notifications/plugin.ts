/**
 * Notifications (docs/notifications.md), on whenever sign-in is (BASTYON_APP_ID) unless
 * NOTIFICATIONS=false: `app.notifications` for the routes and the app's own code, on the
 * service's database. The database opens, and the push sender starts, on the first use, or at
 * ready when the database exists already, so that deliveries a crash left pending go out.
 * With TELEGRAM_BOT_TOKEN, Telegram is a second channel; with TELEGRAM_WEBHOOK_URL, the bot's
 * webhook is set at ready, once per process (a failure is logged: the operator can set it).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { REAL_TIMERS, type Timers } from 'pocketnet-client'
import { PaymentOutbox } from '../payments/payment-outbox.js'
import { emptyNoticeCounts, eventNoticeSettings, type NoticeCounts } from './event-notices.js'
import { EventNotifier } from './event-notifier.js'
import { ExpiryScan } from './expiry-scan.js'
import { parseProxyList } from './notification-rules.js'
import { registerNotificationMetrics } from './notification-metrics.js'
import { NotificationsService } from './notifications-service.js'
import { TelegramChannel } from './telegram/telegram-channel.js'
import type { RetrySchedule } from '../outbox/retry-policy.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined while notifications are off (sign-in off, or NOTIFICATIONS=false). */
    notifications: NotificationsService | undefined
  }
}

export interface NotificationsPluginOptions {
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined
  /** The sender's timers and the sends' waits (tests). */
  timers?: Timers | undefined
  /** How long a send waits for first outcomes (default 2000 ms), a push may take (default NOTIFY_BASTYON_TIMEOUT_MS), and its retries (tests, embedders). */
  sendWaitMs?: number | undefined
  pushTimeoutMs?: number | undefined
  pushRetry?: Partial<RetrySchedule> | undefined
  /** Between two scans for entitlements ending soon (default a minute). */
  expiryScanIntervalMs?: number | undefined
}

export default fp<NotificationsPluginOptions>(async (app, options) => {
  const config = app.miniAppConfig
  if (config.BASTYON_APP_ID === '' || !config.NOTIFICATIONS) {
    app.decorate('notifications', undefined)
    return
  }
  const timers = options.timers ?? REAL_TIMERS
  const telegram = config.TELEGRAM_BOT_TOKEN === ''
    ? undefined
    : new TelegramChannel({
      appId: config.BASTYON_APP_ID,
      botToken: config.TELEGRAM_BOT_TOKEN,
      botUsername: config.TELEGRAM_BOT_USERNAME,
      apiUrl: config.TELEGRAM_API_URL,
      webhookSecret: config.TELEGRAM_WEBHOOK_SECRET,
      timers,
    })
  const service = new NotificationsService(() => app.database.open(), {
    appId: config.BASTYON_APP_ID,
    network: config.POCKETNET_NETWORK,
    proxies: parseProxyList(config.NOTIFY_BASTYON_PROXIES).origins,
    limits: { userIntervalMs: config.NOTIFY_USER_INTERVAL_S * 1000, userDailyLimit: config.NOTIFY_USER_DAILY_LIMIT, appDailyLimit: config.NOTIFY_APP_DAILY_LIMIT },
    ...(options.now === undefined ? {} : { now: options.now }),
    timers,
    ...(telegram === undefined ? {} : { telegram }),
    ...(options.sendWaitMs === undefined ? {} : { waitMs: options.sendWaitMs }),
    timeoutMs: options.pushTimeoutMs ?? config.NOTIFY_BASTYON_TIMEOUT_MS,
    retentionMs: config.NOTIFY_RETENTION_S * 1000,
    ...(options.pushRetry === undefined ? {} : { retry: options.pushRetry }),
    log: app.log,
  })
  app.decorate('notifications', service)
  const counts = emptyNoticeCounts()
  registerNotificationMetrics(app.metrics.registry, service, counts)
  const events = eventNoticesOn(app, service, counts, options)

  const closing = new AbortController()
  app.addHook('onReady', async () => {
    const webhookUrl = config.TELEGRAM_WEBHOOK_URL
    if (telegram !== undefined && webhookUrl !== '') {
      telegram.setWebhook(webhookUrl, closing.signal).then(
        () => { app.log.info({ url: webhookUrl }, 'Notifications: the Telegram bot\'s webhook is set') },
        (err: unknown) => {
          if (closing.signal.aborted) return
          app.log.error({ url: webhookUrl, err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the Telegram bot\'s webhook could not be set (setWebhook); updates do not arrive until it is')
        }
      )
    }
    // A delivery left pending can only be in a database that exists: a new one is not made here.
    const exists = config.DATABASE_URL !== '' || existsSync(join(config.DATA_DIR, 'postgres'))
    if (!exists) return
    service.start().catch((err: unknown) => {
      app.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the database could not be opened at start; the push sender starts on the first use')
    })
  })
  app.addHook('onClose', async () => {
    closing.abort(new Error('the app is closing'))
    await events.close()
    await service.close()
  })
}, { name: 'notifications', dependencies: ['database', 'metrics', 'entitlements', 'payments'] })

/**
 * The app's events worth telling, when it turned any on (event-notices.ts): the outbox consumer
 * `notify`, woken as this instance writes a grant or confirms an invoice, and the expiry scan.
 * The database opens at ready then: rows may wait in the outbox from before a restart.
 */
function eventNoticesOn (app: FastifyInstance, service: NotificationsService, counts: NoticeCounts, options: NotificationsPluginOptions): { close: () => Promise<void> } {
  const config = app.miniAppConfig
  const settings = eventNoticeSettings(config)
  const tellsEvents = settings.invoiceConfirmed !== undefined || settings.entitlementGranted !== undefined
  if (!tellsEvents && settings.expiry === undefined) return { close: async () => {} }
  const now = options.now ?? Date.now
  const timers = options.timers ?? REAL_TIMERS
  let notifier: EventNotifier | undefined
  let scan: ExpiryScan | undefined
  let closed = false
  app.entitlements.onWritten(() => { notifier?.wake() })
  // An invoice confirmed without a grant: the app's handlers hear of it as soon as it is written.
  if (settings.invoiceConfirmed !== undefined) app.payments?.on('confirmed', () => { notifier?.wake() })
  app.addHook('onReady', async () => {
    const db = await app.database.open()
    if (closed) return
    if (tellsEvents) {
      notifier = new EventNotifier({ outbox: new PaymentOutbox(db, { now }), notifications: service, settings, network: config.POCKETNET_NETWORK, log: app.log, now, timers, counts })
      notifier.wake()
    }
    if (settings.expiry !== undefined) {
      scan = new ExpiryScan({ db, notifications: service, text: settings.expiry, log: app.log, now, timers, counts, ...(options.expiryScanIntervalMs === undefined ? {} : { intervalMs: options.expiryScanIntervalMs }) })
      await scan.start()
    }
  })
  return {
    async close () {
      closed = true
      await notifier?.close()
      await scan?.close()
    },
  }
}
