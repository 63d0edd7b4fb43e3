/**
 * buildApp(config): the whole HTTP service, ready to `listen` or `inject`. It never listens itself.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createSharedInstance, isPocketnetAddress, parseNodeList, type SharedInstance } from '../lib/index.js'
import { clientAddressResolver, parseTrustProxy } from './client-address.js'
import { writeClientError } from './client-errors.js'
import type { AppConfig } from './config.js'
import { HttpError } from './errors.js'
import { FastPath } from './fast-path.js'
import { createMetrics } from './metrics.js'
import errorHandler from './plugins/app/error-handler.js'
import httpCache from './plugins/app/http-cache.js'
import fastPathPlugin, { serverWithFastPath } from './plugins/app/fast-path.js'
import rateLimit from './plugins/app/rate-limit.js'
import rpcClient from './plugins/app/rpc-client.js'
import cors from './plugins/external/cors.js'
import helmet from './plugins/external/helmet.js'
import metricsPlugin from './plugins/external/metrics.js'
import staticFiles from './plugins/external/static.js'
import swagger from './plugins/external/swagger.js'
import nodeInfoRoute from './routes/api/nodeinfo.js'
import searchRoute from './routes/api/search.js'
import userRoute from './routes/api/user.js'
import healthRoutes from './routes/health.js'
import { RateLimiter, parseWindow } from './rate-limiter.js'
import { ADDRESS_FORMAT } from './schemas/common.js'

export interface AppOverrides {
  /** The shared client; default: one created from the config on first use. */
  client?: SharedInstance
  /** Where log lines go; default stdout. */
  logStream?: { write (line: string): void }
}

// A client's X-Request-Id is kept when it is short and plain; otherwise a new id is made.
const REQUEST_ID = /^[\w.:-]{1,128}$/

function requestIdOf (request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

/** Human-readable logs in development when pino-pretty (a dev dependency) is installed. */
function prettyTransport (nodeEnv: string): { target: string } | undefined {
  if (nodeEnv !== 'development') return undefined
  try {
    createRequire(import.meta.url).resolve('pino-pretty')
    return { target: 'pino-pretty' }
  } catch {
    return undefined
  }
}

export async function buildApp (config: AppConfig, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const transport = overrides.logStream ? undefined : prettyTransport(config.NODE_ENV)
  const metrics = createMetrics()
  const client = overrides.client ?? createSharedInstance({
    nodes: parseNodeList(config.POCKETNET_NODES),
    deadlineMs: config.RPC_DEADLINE_MS,
    attemptTimeoutMs: config.RPC_TIMEOUT_MS,
    probeIntervalMs: config.POCKETNET_PROBE_INTERVAL_MS,
    maxLagBlocks: config.POCKETNET_MAX_LAG_BLOCKS,
    connectionsPerNode: config.POCKETNET_CONNECTIONS_PER_NODE,
    cache: {
      ttlMs: { getnodeinfo: config.CACHE_TTL_NODEINFO_MS, getuserprofile: config.CACHE_TTL_PROFILE_MS, search: config.CACHE_TTL_SEARCH_MS },
      maxEntries: config.CACHE_MAX_ENTRIES,
      maxBytes: config.CACHE_MAX_BYTES,
      serveStale: config.CACHE_SERVE_STALE,
    },
    onAttempt: metrics.onAttempt,
    onCacheLookup: metrics.onCacheLookup,
  })
  metrics.watchClient(() => client.peek())
  const trustProxy = parseTrustProxy(config.TRUST_PROXY)
  const clientAddress = clientAddressResolver(trustProxy)
  const limiter = new RateLimiter(config.RATE_LIMIT_MAX, parseWindow(config.RATE_LIMIT_WINDOW))
  const fastPath = new FastPath({
    maxEntries: config.CACHE_MAX_ENTRIES,
    maxBytes: config.CACHE_MAX_BYTES,
    isFreshAnswer: answer => client.peek()?.isFreshAnswer(answer) ?? false,
    limiter,
    clientAddress,
    requestId: requestIdOf,
  })

  const app = Fastify({
    serverFactory: serverWithFastPath(fastPath),
    logger: {
      level: config.LOG_LEVEL,
      ...(overrides.logStream ? { stream: overrides.logStream } : {}),
      ...(transport ? { transport } : {}),
    },
    // One line per request is logged below, at a level that keeps successes out of default logs.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdOf,
    trustProxy,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      maxHeaderSize: config.MAX_HEADER_BYTES,
      // How often Node checks for requests past requestTimeout.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.REQUEST_TIMEOUT_MS / 4))),
    },
    clientErrorHandler: writeClientError,
    // Long enough for any address, so a too-long one gets a 400 rather than a 404.
    routerOptions: { maxParamLength: 200 },
    // verbose: validation errors carry the rejected value, which 400 answers quote.
    ajv: { customOptions: { verbose: true, formats: { [ADDRESS_FORMAT]: isPocketnetAddress } } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Successes are logged at debug (below): at that level every request must go through Fastify.
  fastPath.enabled = app.log.level !== 'debug' && app.log.level !== 'trace'
  fastPath.onError = err => app.log.error({ err }, 'fast path failed; Fastify answers instead')

  // Hooks on every request: callback style, which costs less than an async function's promise.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.url.length > config.MAX_URL_LENGTH) {
      done(new HttpError(414, 'URI too long', `The URL is ${request.url.length} characters; the limit is ${config.MAX_URL_LENGTH}`))
      return
    }
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id)
    // While shutting down, answers close their connection, so that keep-alive clients let go
    // and the server can finish once the requests in flight are answered.
    if (!app.server.listening) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode
    const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug'
    // Successes log at debug: build the line only when someone reads it.
    if (level !== 'debug' || request.log.level === 'debug' || request.log.level === 'trace') {
      request.log[level]({ route: request.routeOptions.url, method: request.method, status, durationMs: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed')
    }
    done()
  })

  await app.register(rpcClient, { client })
  // Fastify routes take the error handler in force when they are registered, so the general
  // handler (the spec's "registered last") comes before the routes here.
  await app.register(errorHandler, { nodeEnv: config.NODE_ENV })
  await app.register(helmet)
  const corsOrigins = parseNodeList(config.CORS_ORIGINS)
  // With no origin allowed there is nothing for CORS to add: no plugin, no work per request.
  if (corsOrigins.length > 0) await app.register(cors, { origins: corsOrigins })
  await app.register(rateLimit, { limiter, clientAddress })
  await app.register(metricsPlugin, { metrics })
  await app.register(fastPathPlugin, { fastPath, counterOf: metrics.fastAnswerCounter })
  await app.register(swagger)
  await app.register(httpCache, {
    maxAgeMs: {
      '/api/nodeinfo': config.CACHE_TTL_NODEINFO_MS,
      '/api/user/:address': config.CACHE_TTL_PROFILE_MS,
      '/api/search': config.CACHE_TTL_SEARCH_MS,
    },
    staleWhileRevalidate: config.CACHE_SERVE_STALE,
  })
  await app.register(async (api) => {
    await api.register(nodeInfoRoute)
    await api.register(userRoute)
    await api.register(searchRoute)
  }, { prefix: '/api' })
  await app.register(healthRoutes)
  await app.register(staticFiles)
  return app
}
