/**
 * `app.redis`: the one link to the Redis that instances share
 * (packages/pocketnet-client/redis/redis-link.ts), when REDIS_URL is set; `undefined` otherwise,
 * and everything stays in-process. The rate limit and the RPC client use it; it is closed with the
 * app. Losing Redis is logged once, and again when it is back.
 */
import fp from 'fastify-plugin'
import { RedisLink } from 'pocketnet-client'
import type { Metrics } from '../metrics/metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    redis: RedisLink | undefined
  }
}

export interface RedisPluginOptions {
  /** Milliseconds on a monotonic clock, for the link's back-off after a failure (tests). */
  clock?: (() => number) | undefined
}

export default fp<RedisPluginOptions>(async (app, { clock }) => {
  const { REDIS_URL: url, REDIS_TIMEOUT_MS: timeoutMs } = app.miniAppConfig
  if (url === '') {
    app.decorate('redis', undefined)
    return
  }
  let state: 'ready' | 'down' | undefined
  const link = new RedisLink({
    url,
    timeoutMs,
    ...(clock ? { clock } : {}),
    // The metrics plugin comes later (after the rate limit, which needs this link): looked up when used.
    onOperation: event => (app as { metrics?: Metrics }).metrics?.onRedisOperation(event),
    onStateChange (next, err) {
      if (next === state) return
      state = next
      if (next === 'ready') app.log.info('Redis connected: answers, calls in flight and rate limits are shared')
      else app.log.warn({ err: err?.message }, 'Redis unavailable: going on in-process until it is back')
    },
  })
  app.decorate('redis', link)
  app.addHook('onClose', () => link.close())
}, { name: 'redis' })
