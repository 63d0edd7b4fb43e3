/**
 * Overload: while the event loop's mean delay, sampled every second by
 * [@fastify/under-pressure](https://github.com/fastify/under-pressure), is over
 * MAX_EVENT_LOOP_DELAY_MS, requests are refused before any work with 503 and `Retry-After: 1`,
 * in the envelope (the error handler writes it). 0 turns the check off: the plugin is not
 * registered at all, and `app.isUnderPressure()` is always false.
 *
 * Routes that must answer under load say so in their config: `pressureHandler: servedUnderPressure`
 * (`/healthz`: the process is alive, or an orchestrator would restart a merely busy instance;
 * `/metrics`: scrapes show the overload). `/readyz` is refused like the API, which takes an
 * overloaded instance out of a load balancer's rotation.
 */
import underPressure from '@fastify/under-pressure'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { HookLedger } from '../fast-path/hook-ledger.js'
import { ServiceUnavailableError } from './errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * @fastify/under-pressure's handler for this route, in place of the app's: returning null lets
     * the request through under pressure (see {@link servedUnderPressure}).
     */
    pressureHandler?: (request: FastifyRequest, reply: FastifyReply, type: string, value: number | undefined) => unknown
  }
}

const RETRY_AFTER_SECONDS = 1

/** For a route's config, `pressureHandler: servedUnderPressure`: the route answers under pressure too. */
export function servedUnderPressure (): null {
  return null
}

export default fp<{ ledger: HookLedger }>(async (app, { ledger }) => {
  const limit = app.config.MAX_EVENT_LOOP_DELAY_MS
  if (limit === 0) {
    // What the plugin would have decorated, so that code and types can count on it.
    app.decorate('isUnderPressure', () => false)
    app.decorate('memoryUsage', () => {
      const { heapUsed, rss } = process.memoryUsage()
      return { heapUsed, rssBytes: rss, eventLoopDelay: 0, eventLoopUtilized: 0 }
    })
    return
  }
  // Deliberately not a hook the fast path refuses: the fast path replays cached answers before
  // Fastify, so this check never sees them. Replaying a fresh cached answer costs less than
  // building this 503 would, so under pressure the fast path keeps answering what it has, and
  // only the requests that would do work are refused.
  await ledger.trusting(() => app.register(underPressure, {
    maxEventLoopDelay: limit,
    retryAfter: RETRY_AFTER_SECONDS,
    // A rejected promise reaches the error handler (the plugin calls next(err)).
    pressureHandler: async (_request, _reply, _type, value) => {
      const delay = Math.round(value ?? 0)
      throw new ServiceUnavailableError(`The server is overloaded: its event loop is delayed ${delay} ms (limit ${limit} ms); retry after ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS)
    },
  }))
}, { name: 'under-pressure' })
