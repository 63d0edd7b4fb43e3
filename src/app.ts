/**
 * buildApp(config): the whole HTTP service, ready to `listen` or `inject`. It never listens.
 *
 * The order below matters where a plugin must see what comes after it: the rate limit, the fast
 * path's checks and the OpenAPI document learn of each route as it is added, so they come before
 * any plugin that adds routes; the routes come last. docs/architecture.md walks a request through.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { SharedInstance } from 'pocketnet-client'
import type { Timers } from 'pocketnet-client'
import auth from './auth/plugin.js'
import type { AppConfig } from './config.js'
import { FastPath } from './fast-path/fast-path.js'
import { HookLedger } from './fast-path/hook-ledger.js'
import fastPathRecorder from './fast-path/recorder.js'
import accessLog from './http/access-log.js'
import draining from './http/draining.js'
import events from './events/plugin.js'
import payments from './payments/plugin.js'
import errorHandler from './http/error-handler.js'
import httpCache from './http/http-cache.js'
import jsonBody from './http/json-body.js'
import requestId from './http/request-id.js'
import { serverOptions, type SchemaCompilers } from './http/server-options.js'
import underPressure from './http/under-pressure.js'
import unrouted from './http/unrouted.js'
import urlLimit from './http/url-limit.js'
import metrics from './metrics/plugin.js'
import cors from './plugins/external/cors.js'
import helmet from './plugins/external/helmet.js'
import staticFiles from './plugins/external/static.js'
import swagger from './plugins/external/swagger.js'
import pocketnetClient from './pocketnet/client-plugin.js'
import rateLimit from './rate-limit/rate-limit.js'
import redis from './redis/plugin.js'
import apiRoutes from './routes/api/index.js'
import healthRoutes from './routes/health.js'

export interface AppOverrides {
  /** The shared client; default: one created from the config on first use. */
  client?: SharedInstance
  /** Where log lines go; default stdout. */
  logStream?: { write (line: string): void }
  /** Milliseconds on a monotonic clock, for the client's deadlines and cache and the rate limit's windows (tests). */
  clock?: () => number
  /** Milliseconds since the epoch, for sign-in: signatures' dates, challenges and sessions (tests). */
  now?: () => number
  /** The live events' timers: keep-alives, long-poll waits (tests move them by hand). */
  eventTimers?: Timers
  /** The timers that hold the 429s of a client that ignores them (tests release them by hand). */
  refusalTimers?: Timers
  /**
   * Schema compilers in place of Fastify's own, which compile each route's schemas anew for every
   * app: for a process that builds many apps (the tests: test/helpers/build-app.ts).
   */
  compilers?: SchemaCompilers
}

export async function buildApp (config: AppConfig, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const fastPath = new FastPath({ maxEntries: config.CACHE_MAX_ENTRIES, maxBytes: config.CACHE_MAX_BYTES })
  const app = Fastify(serverOptions(config, fastPath, overrides)).withTypeProvider<TypeBoxTypeProvider>()
  // Before anything adds a hook: the fast path must know every hook a route will run.
  const ledger = new HookLedger()
  ledger.install(app)
  app.decorate('config', config)
  if (config.TRUST_PROXY === 'true') {
    // Any client can then write its own X-Forwarded-For, and so pick its own rate-limit key.
    app.log.warn('TRUST_PROXY=true believes every X-Forwarded-For: any client can choose its rate-limit key; name your proxy\'s address or CIDR instead (README, "Configuration")')
  }

  // Fastify routes take the error handler in force when they are added: it comes first.
  await app.register(errorHandler)
  // Its preClose hook first: the answers sent while closing close their connections.
  await app.register(draining)
  await app.register(redis, { clock: overrides.clock })
  await app.register(rateLimit, { clock: overrides.clock, timers: overrides.refusalTimers })
  await app.register(jsonBody)
  // After the rate limit: a route's sign-in check runs after its count.
  await app.register(auth, { now: overrides.now })
  await app.register(metrics, { clock: overrides.clock })
  await app.register(pocketnetClient, { client: overrides.client, clock: overrides.clock })
  await app.register(events, { now: overrides.now, timers: overrides.eventTimers })
  await app.register(payments, { now: overrides.now })
  await app.register(fastPathRecorder, { fastPath, ledger })
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
  await app.register(swagger)

  await app.register(apiRoutes, { prefix: '/api' })
  await app.register(healthRoutes)
  await app.register(staticFiles)
  return app
}
