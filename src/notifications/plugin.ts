/**
 * Notifications (docs/notifications.md), on whenever sign-in is (BASTYON_APP_ID) unless
 * NOTIFICATIONS=false: `app.notifications` for the routes and the app's own code, on the
 * service's database. The database opens, and the push sender starts, on the first use, or at
 * ready when the database exists already, so that deliveries a crash left pending go out.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fp from 'fastify-plugin'
import { REAL_TIMERS, type Timers } from 'pocketnet-client'
import { parseProxyList } from './notification-rules.js'
import { registerNotificationMetrics } from './notification-metrics.js'
import { NotificationsService } from './notifications-service.js'
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
}

export default fp<NotificationsPluginOptions>(async (app, options) => {
  const config = app.miniAppConfig
  if (config.BASTYON_APP_ID === '' || !config.NOTIFICATIONS) {
    app.decorate('notifications', undefined)
    return
  }
  const service = new NotificationsService(() => app.database.open(), {
    appId: config.BASTYON_APP_ID,
    network: config.POCKETNET_NETWORK,
    proxies: parseProxyList(config.NOTIFY_BASTYON_PROXIES).origins,
    limits: { userIntervalMs: config.NOTIFY_USER_INTERVAL_S * 1000, userDailyLimit: config.NOTIFY_USER_DAILY_LIMIT, appDailyLimit: config.NOTIFY_APP_DAILY_LIMIT },
    ...(options.now === undefined ? {} : { now: options.now }),
    timers: options.timers ?? REAL_TIMERS,
    ...(options.sendWaitMs === undefined ? {} : { waitMs: options.sendWaitMs }),
    timeoutMs: options.pushTimeoutMs ?? config.NOTIFY_BASTYON_TIMEOUT_MS,
    ...(options.pushRetry === undefined ? {} : { retry: options.pushRetry }),
    log: app.log,
  })
  app.decorate('notifications', service)
  registerNotificationMetrics(app.metrics.registry, service)

  app.addHook('onReady', async () => {
    // A delivery left pending can only be in a database that exists: a new one is not made here.
    const exists = config.DATABASE_URL !== '' || existsSync(join(config.DATA_DIR, 'postgres'))
    if (!exists) return
    service.start().catch((err: unknown) => {
      app.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the database could not be opened at start; the push sender starts on the first use')
    })
  })
  app.addHook('onClose', async () => { await service.close() })
}, { name: 'notifications', dependencies: ['database', 'metrics'] })
