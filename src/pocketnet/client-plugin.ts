/**
 * The one shared Pocketnet client of this app (`app.pocketnet`): created on the first request
 * that needs it, shared by every later request, closed when the app closes. Its options come
 * from the configuration (client-options.ts); its attempts and cache lookups feed the metrics.
 * With REDIS_URL, its cache has a second level in Redis, shared by every instance.
 */
import fp from 'fastify-plugin'
import { createSharedInstance, DEFAULT_NODES, type SharedInstance } from 'pocketnet-client'
import { clientOptions } from './client-options.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** `await app.pocketnet.get()` gives the shared client. */
    pocketnet: SharedInstance
  }
}

export interface ClientPluginOptions {
  /** A client of the caller's own (tests); default: one made from the configuration. */
  client?: SharedInstance | undefined
  /** Milliseconds on a monotonic clock, for the client's deadlines and cache; default performance.now. */
  clock?: (() => number) | undefined
}

export default fp<ClientPluginOptions>(async (app, { client: given, clock }) => {
  const { metrics } = app
  if (given === undefined && app.miniAppConfig.NODE_ENV === 'production' && app.miniAppConfig.POCKETNET_NODES === DEFAULT_NODES.join(',')) {
    // Anyone running one of them, or on the path to it, can answer what they like: fine for a
    // demo, not for what must be true (docs/security.md, "Hostile nodes").
    app.log.warn('POCKETNET_NODES is unset: using the built-in list of third-party public nodes over plain HTTP; set nodes you run or trust (docs/security.md)')
  }
  const client = given ?? createSharedInstance({
    ...clientOptions(app.miniAppConfig),
    onAttempt: metrics.onAttempt,
    onOverload: metrics.onOverload,
    onCacheLookup: metrics.onCacheLookup,
    onSharedLookup: metrics.onSharedLookup,
    redis: app.redis,
    ...(clock ? { clock } : {}),
  })
  metrics.watchClient(() => client.peek())
  app.decorate('pocketnet', client)
  app.addHook('onClose', () => client.close())
}, { name: 'pocketnet-client', dependencies: ['metrics', 'redis'] })
