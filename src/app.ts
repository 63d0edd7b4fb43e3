/**
 * buildApp(config): the whole HTTP service, ready to `listen` or `inject`. It never listens itself.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createSharedInstance, isPocketnetAddress, parseNodeList, type SharedInstance } from '../lib/index.js'
import type { AppConfig } from './config.js'
import errorHandler from './plugins/app/error-handler.js'
import httpCache from './plugins/app/http-cache.js'
import rpcClient from './plugins/app/rpc-client.js'
import staticFiles from './plugins/external/static.js'
import nodeInfoRoute from './routes/api/nodeinfo.js'
import healthRoutes from './routes/health.js'
import searchRoute from './routes/api/search.js'
import userRoute from './routes/api/user.js'
import { ADDRESS_FORMAT } from './schemas/common.js'

export interface AppOverrides {
  /** The shared client; default: one created from the config on first use. */
  client?: SharedInstance
  /** Where log lines go; default stdout. */
  logStream?: { write (line: string): void }
}

export async function buildApp (config: AppConfig, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.LOG_LEVEL, ...(overrides.logStream ? { stream: overrides.logStream } : {}) },
    // Long enough for any address, so a too-long one gets a 400 rather than a 404.
    routerOptions: { maxParamLength: 200 },
    // verbose: validation errors carry the rejected value, which 400 answers quote.
    ajv: { customOptions: { verbose: true, formats: { [ADDRESS_FORMAT]: isPocketnetAddress } } },
  }).withTypeProvider<TypeBoxTypeProvider>()

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
    },
  })
  await app.register(rpcClient, { client })
  // Fastify routes take the error handler in force when they are registered, so the general
  // handler (the spec's "registered last") comes before the routes here.
  await app.register(errorHandler, { nodeEnv: config.NODE_ENV })
  await app.register(httpCache, {
    maxAgeMs: {
      '/api/nodeinfo': config.CACHE_TTL_NODEINFO_MS,
      '/api/user/:address': config.CACHE_TTL_PROFILE_MS,
      '/api/search': config.CACHE_TTL_SEARCH_MS,
    },
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
