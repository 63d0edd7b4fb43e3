/**
 * Entitlements (docs/entitlements.md): `app.entitlements`, on the service's database (opened on
 * first use), with its per-user cache and, with REDIS_URL, the other instances told of each
 * change. Grants and revocations are announced on the user's own topic (`user:<address>`, event
 * `entitlement`), which only the user's stream ticket opens, and, with PAYMENT_WEBHOOK_URL, told
 * to the webhook through the outbox (entitlement-events.ts).
 */
import fp from 'fastify-plugin'
import { userTopic } from '../events/topics.js'
import { eventNoticeSettings, NOTIFY_CONSUMER } from '../notifications/event-notices.js'
import { WEBHOOK_CONSUMER } from '../payments/webhook-sender.js'
import { EntitlementStore } from './entitlement-store.js'
import { EntitlementsService } from './entitlements-service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What users hold: `has`, `list`, `history`, `grant`, `revoke`. */
    entitlements: EntitlementsService
  }
}

export interface EntitlementsPluginOptions {
  /** Milliseconds since the epoch: when grants end (tests). */
  now?: (() => number) | undefined
  /** Milliseconds on a monotonic clock: the cache entries' age (tests). */
  clock?: (() => number) | undefined
}

export default fp<EntitlementsPluginOptions>(async (app, { now = Date.now, clock }) => {
  const config = app.miniAppConfig
  let store: EntitlementStore | undefined
  // With webhooks on (which the configuration allows only with payments on), each grant and
  // revocation writes its event for the sender, in its own transaction.
  // With grants told to their holders (NOTIFY_ON_ENTITLEMENT_GRANTED), each gets a row for the
  // notifications too (revocations as well: they are not told, and pass).
  const consumers = [
    ...(config.PAYMENT_WEBHOOK_URL === '' ? [] : [WEBHOOK_CONSUMER]),
    ...(eventNoticeSettings(config).entitlementGranted === undefined ? [] : [NOTIFY_CONSUMER]),
  ]
  const entitlements = new EntitlementsService({
    store: async () => (store ??= new EntitlementStore(await app.database.open(), { now, consumers })),
    network: config.POCKETNET_NETWORK,
    now,
    ...(clock === undefined ? {} : { clock }),
    cacheTtlMs: config.ENTITLEMENTS_CACHE_TTL_MS,
    maxCachedUsers: config.ENTITLEMENTS_CACHE_MAX_USERS,
    redis: app.redis,
    announce: (address, change) => { app.events.announce(userTopic(address), 'entitlement', { ...change }).catch(() => {}) },
  })
  app.decorate('entitlements', entitlements)
  app.addHook('onClose', async () => { entitlements.close() })
}, { name: 'entitlements', dependencies: ['database', 'events', 'redis'] })
