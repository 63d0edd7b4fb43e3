/**
 * miniApp: the whole service as one Fastify plugin, for a mini-app developer's own Fastify app
 * (`app.register(miniApp, { paymentAddress: 'P…' })`) as much as for ours (app.ts registers it
 * into the server it makes). It brings the API routes under /api, sign-in, live events,
 * payments, entitlements, per-user storage, notifications, rate limits, metrics, health and the
 * OpenAPI docs, and leaves each capability typed on the instance: `app.payments`, `app.entitlements`,
 * `app.storage`, `app.notifications`, `app.payouts`, `app.events`, `app.signIn`, `app.pocketnet`, `app.metrics`.
 *
 * Settings: each variable of the environment (README, "Configuration") is also an option, its
 * name in camelCase (PAYMENT_ADDRESS is `paymentAddress`); an option given in code wins over the
 * variable, and the variable over the default. Both are checked by the one schema (config.ts).
 *
 * The order below matters where a plugin must see what comes after it: the rate limit, the fast
 * path's checks and the OpenAPI document learn of each route as it is added, so they come before
 * any plugin that adds routes; the routes come last. docs/architecture.md walks a request through.
 *
 * In a developer's app the plugin cannot have what only the server's own options give (app.ts):
 * the fast path in front of Fastify, the cap on connections, our request ids and parser errors.
 * It keeps everything else, and compiles its own routes' schemas with the address format of the
 * configured network (below), which a Fastify made elsewhere does not know.
 */
import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { isPocketnetAddress, type SharedInstance, type Timers } from 'pocketnet-client'
import adminToken from './auth/admin-token.js'
import auth from './auth/plugin.js'
import { ConfigError, ConfigSchema, loadConfig, type AppConfig } from './config.js'
import database from './db/plugin.js'
import entitlements from './entitlements/plugin.js'
import events from './events/plugin.js'
import type { FastPath } from './fast-path/fast-path.js'
import { HookLedger } from './fast-path/hook-ledger.js'
import fastPathRecorder from './fast-path/recorder.js'
import accessLog from './http/access-log.js'
import draining from './http/draining.js'
import errorHandler from './http/error-handler.js'
import httpCache from './http/http-cache.js'
import jsonBody from './http/json-body.js'
import requestId from './http/request-id.js'
import underPressure from './http/under-pressure.js'
import unrouted from './http/unrouted.js'
import urlLimit from './http/url-limit.js'
import metrics from './metrics/plugin.js'
import type { RetrySchedule } from './outbox/retry-policy.js'
import notifications from './notifications/plugin.js'
import payouts from './payouts/plugin.js'
import payments from './payments/plugin.js'
import cors from './plugins/external/cors.js'
import helmet from './plugins/external/helmet.js'
import staticFiles from './plugins/external/static.js'
import swagger, { type OpenApiInfo } from './plugins/external/swagger.js'
import pocketnetClient from './pocketnet/client-plugin.js'
import rateLimit from './rate-limit/rate-limit.js'
import redis from './redis/plugin.js'
import apiRoutes from './routes/api/index.js'
import healthRoutes from './routes/health.js'
import storage from './storage/plugin.js'
import { ADDRESS_FORMAT } from './schemas/common.js'

export type { AppConfig } from './config.js'
export type { OpenApiInfo } from './plugins/external/swagger.js'
export { ConfigError } from './config.js'
export type { InvoiceView, NewInvoice, PaymentsService } from './payments/payments-service.js'
export type { InvoiceEvent, InvoiceEventType } from './payments/invoice.js'
export type { AuthUser } from './auth/sign-in.js'
export type { EntitlementsService, GrantOptions } from './entitlements/entitlements-service.js'
export type { Entitlement, Grant, GrantTerms } from './entitlements/entitlement.js'
export { optionalUser, signedInUser } from './auth/plugin.js'
export type { ListOptions, StorageList, StorageScope, StorageService, StoredItem, StoredKey, Usage as StorageUsage, WriteConditions } from './storage/storage-service.js'
export { StorageError, STORAGE_ERROR_CODES, type StorageErrorCode } from './storage/storage-errors.js'
export type { ChannelView, NotificationsService, SendResult, SendStatus } from './notifications/notifications-service.js'
export type { NotificationInput } from './notifications/notification-rules.js'
export { NotificationError, NOTIFICATION_ERROR_CODES, type NotificationErrorCode } from './notifications/notification-errors.js'
export type { PayoutOutcome, PayoutRequest, PayoutsService, RefundRequest, WalletState } from './payouts/payouts-service.js'
export type { PayoutState, PayoutView } from './payouts/payout.js'
export { PayoutError, PAYOUT_ERROR_CODES, type PayoutErrorCode } from './payouts/payout-errors.js'
// What each plugin adds to Fastify's types (app.payments, request.user, a route's config.auth…)
// reaches a developer's app through these lines: a declaration file keeps only what it names.
export {} from './auth/plugin.js'
export {} from './db/plugin.js'
export {} from './entitlements/plugin.js'
export {} from './events/plugin.js'
export {} from './http/envelope.js'
export {} from './http/route-policy.js'
export {} from './http/under-pressure.js'
export {} from './metrics/plugin.js'
export {} from './payments/plugin.js'
export {} from './pocketnet/client-plugin.js'
export {} from './rate-limit/rate-limit.js'
export {} from './storage/plugin.js'
export {} from './notifications/plugin.js'
export {} from './payouts/plugin.js'
export {} from './auth/admin-token.js'
export {} from './redis/plugin.js'

/** PAYMENT_ADDRESS → paymentAddress. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<S>

/** Every variable of the environment as an option in code. */
export type MiniAppSettings = { [Name in keyof AppConfig as CamelCase<Name & string>]?: AppConfig[Name] }

/** What tests and embedders may put in place of the plugin's own. */
export interface MiniAppOverrides {
  /** The shared RPC client; default: one created from the settings on first use. */
  client?: SharedInstance
  /** Milliseconds on a monotonic clock, for the client's deadlines and cache and the rate limit's windows (tests). */
  clock?: () => number
  /** Milliseconds since the epoch, for sign-in, invoices and sessions (tests). */
  now?: () => number
  /** The live events' timers: keep-alives, long-poll waits (tests move them by hand). */
  eventTimers?: Timers
  /** The timers that hold the 429s of a client that ignores them (tests release them by hand). */
  refusalTimers?: Timers
  /** The push sender's timers and the sends' waits (tests). */
  notificationTimers?: Timers
  /** How long `app.notifications.send` waits for first outcomes before answering `queued`; default 2000 ms. */
  notificationWaitMs?: number
  /** The push retries' schedule in place of the default (5 s doubling to 10 min, 8 attempts). */
  notificationRetry?: Partial<RetrySchedule>
  /** Between two scans for entitlements ending soon (NOTIFY_BEFORE_EXPIRY_S); default a minute. */
  notificationExpiryScanMs?: number
  /** The payouts' check timer and lease (tests). */
  payoutTimers?: Timers
}

export interface MiniAppOptions extends MiniAppSettings, MiniAppOverrides {
  /** The variables the settings not given in code are read from; default `process.env`. */
  env?: Record<string, string | undefined>
  /** A folder of files served at `/` (your page and its scripts); default none. */
  staticRoot?: string
  /** The OpenAPI document's title, version and description (`/openapi.json`, `/docs`); default the service's. */
  openapi?: OpenApiInfo
}

/** How app.ts gives the plugin the server it made; not for a developer's app. */
export const SERVICE = Symbol('bastyon-miniapp-server: the service\'s own server')
export interface ServiceServer {
  config: AppConfig
  fastPath: FastPath
  ledger: HookLedger
}

const SETTING_NAMES = new Map(Object.keys(ConfigSchema.properties).map(name => [camelCase(name), name]))
// Ours, then Fastify's own options of register().
const OTHER_OPTIONS = new Set(['client', 'clock', 'now', 'eventTimers', 'refusalTimers', 'notificationTimers', 'notificationWaitMs', 'notificationRetry', 'notificationExpiryScanMs', 'payoutTimers', 'env', 'staticRoot', 'openapi', 'prefix', 'logLevel', 'logSerializers'])

function camelCase (name: string): string {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
}

/** The configuration from `options` over `env`; an unknown option is an error, like a bad value. */
export function resolveConfig (options: MiniAppOptions, env: Record<string, string | undefined> = process.env): AppConfig {
  const fromCode: Record<string, string> = {}
  const unknown: string[] = []
  for (const [option, value] of Object.entries(options as Record<string, unknown>)) {
    const name = SETTING_NAMES.get(option)
    if (name !== undefined) {
      if (value !== undefined) fromCode[name] = String(value)
    } else if (!OTHER_OPTIONS.has(option)) {
      unknown.push(`${option}: not an option of bastyon-miniapp-server (the options are the environment's variables in camelCase, such as paymentAddress)`)
    }
  }
  if (unknown.length > 0) throw new ConfigError(unknown)
  return loadConfig({ ...env, ...fromCode })
}

/** The address format of the configured network, and Ajv's verbose errors, which 400 answers quote. */
function routeValidators (config: AppConfig) {
  const compilers = AjvCompiler()({}, {
    customOptions: { verbose: true, formats: { [ADDRESS_FORMAT]: (value: string) => isPocketnetAddress(value, config.POCKETNET_NETWORK) } },
  })
  return compilers as unknown as Parameters<FastifyInstance['setValidatorCompiler']>[0]
}

const plugin: FastifyPluginAsync<MiniAppOptions> = async (app, options) => {
  const service = (options as { [SERVICE]?: ServiceServer })[SERVICE]
  const config = service?.config ?? resolveConfig(options, options.env)
  const ledger = service?.ledger ?? new HookLedger()
  app.decorate('miniAppConfig', config)
  if (config.TRUST_PROXY === 'true') {
    // Any client can then write its own X-Forwarded-For, and so pick its own rate-limit key.
    app.log.warn('TRUST_PROXY=true believes every X-Forwarded-For: any client can choose its rate-limit key; name your proxy\'s address or CIDR instead (README, "Configuration")')
  }

  // Fastify routes take the error handler in force when they are added: it comes first.
  await app.register(errorHandler)
  // Its preClose hook first: the answers sent while closing close their connections.
  await app.register(draining)
  await app.register(redis, { clock: options.clock })
  await app.register(rateLimit, { clock: options.clock, timers: options.refusalTimers })
  await app.register(jsonBody)
  // After the rate limit: a route's sign-in check runs after its count.
  await app.register(auth, { now: options.now })
  // Operators' routes (config.admin): after the rate limit, like sign-in.
  await app.register(adminToken)
  await app.register(metrics, { clock: options.clock })
  await app.register(pocketnetClient, { client: options.client, clock: options.clock })
  // Before every capability that keeps state, so closed after them.
  await app.register(database)
  await app.register(events, { now: options.now, timers: options.eventTimers })
  // Before payments, which tell it of the grants their confirmations write.
  await app.register(entitlements, { now: options.now, clock: options.clock })
  // Before payments, whose refunds it makes.
  await app.register(payouts, { now: options.now, timers: options.payoutTimers })
  await app.register(payments, { now: options.now })
  await app.register(storage, { now: options.now })
  await app.register(notifications, { now: options.now, timers: options.notificationTimers, sendWaitMs: options.notificationWaitMs, pushRetry: options.notificationRetry, expiryScanIntervalMs: options.notificationExpiryScanMs })
  if (service !== undefined) {
    await app.register(fastPathRecorder, { fastPath: service.fastPath, ledger })
  } else {
    // What the recorder would note for the fast path, which a developer's server does not have.
    app.decorateReply('renderedAnswer', null)
  }
  await app.register(urlLimit)
  await app.register(requestId)
  await app.register(accessLog)
  await app.register(helmet)
  // After the rate limit's count and the metrics' in-flight count, before CORS answers
  // preflights: a request no route answers, an OPTIONS that is no preflight and a request
  // without Host are answered here, before any body is read.
  await app.register(unrouted)
  await app.register(cors, { ledger })
  // Overload (503) applies to every route: after the metrics' in-flight count, whose onResponse
  // hook would otherwise uncount a request it never counted, and after CORS, so that a browser
  // can read the 503 and its Retry-After.
  await app.register(underPressure, { ledger })
  await app.register(httpCache)
  await app.register(swagger, { info: options.openapi })

  if (service !== undefined) {
    await app.register(apiRoutes, { prefix: '/api' })
  } else {
    const validators = routeValidators(config)
    await app.register(async (api) => {
      api.setValidatorCompiler(validators)
      await api.register(apiRoutes)
    }, { prefix: '/api' })
  }
  await app.register(healthRoutes)
  if (options.staticRoot !== undefined) await app.register(staticFiles, { root: options.staticRoot })
}

/** Registered with fastify-plugin's skip-override: its decorators are the registering app's. */
export const miniApp = fp(plugin, { name: 'bastyon-miniapp-server', fastify: '5.x' })
export default miniApp
