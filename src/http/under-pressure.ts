/**
 * Overload: while the event loop's mean delay, sampled every second (event-loop-delay.ts), is
 * over MAX_EVENT_LOOP_DELAY_MS, requests are refused before any work with 503 and
 * `Retry-After: 1`, in the envelope (the error handler writes it). 0 turns the check off: no
 * sampler, no hook, and `app.isUnderPressure()` is always false.
 *
 * The check of [@fastify/under-pressure](https://github.com/fastify/under-pressure), which this
 * replaces, with its sampler's process.memoryUsage() left out: that call throws EMFILE when the
 * process runs out of descriptors, which stopped the process (issue #39, event-loop-delay.ts).
 *
 * Routes that must answer under load say so in their config: `pressureHandler: servedUnderPressure`
 * (`/healthz`: the process is alive, or an orchestrator would restart a merely busy instance;
 * `/metrics`: scrapes show the overload). `/readyz` is refused like the API, which takes an
 * overloaded instance out of a load balancer's rotation.
 */
import fp from 'fastify-plugin'
import type { HookLedger } from '../fast-path/hook-ledger.js'
import { ServiceUnavailableError } from './errors.js'
import { EventLoopDelay } from './event-loop-delay.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the last sample of the event loop's delay was over MAX_EVENT_LOOP_DELAY_MS. */
    isUnderPressure (): boolean
  }
  interface FastifyContextConfig {
    /** `servedUnderPressure`: the route answers under pressure too. */
    pressureHandler?: typeof servedUnderPressure
  }
}

const RETRY_AFTER_SECONDS = 1

/** For a route's config, `pressureHandler: servedUnderPressure`: the route answers under pressure too. */
export function servedUnderPressure (): null {
  return null
}

export default fp<{ ledger: HookLedger }>(async (app, { ledger }) => {
  const limit = app.miniAppConfig.MAX_EVENT_LOOP_DELAY_MS
  if (limit === 0) {
    app.decorate('isUnderPressure', () => false)
    return
  }
  const loop = new EventLoopDelay()
  // From ready on: opening a new embedded database (initdb, in onReady) blocks the loop for
  // seconds, which is no overload of a server that serves nothing yet.
  app.addHook('onReady', async () => { loop.start() })
  app.addHook('onClose', async () => loop.stop())
  const isUnderPressure = (): boolean => loop.delayMs > limit
  app.decorate('isUnderPressure', isUnderPressure)
  // Deliberately not a hook the fast path refuses: the fast path replays cached answers before
  // Fastify, so this check never sees them. Replaying a fresh cached answer costs less than
  // building this 503 would, so under pressure the fast path keeps answering what it has, and
  // only the requests that would do work are refused.
  await ledger.trusting(async () => {
    app.addHook('onRequest', function refuseUnderPressure (request, _reply, done) {
      if (!isUnderPressure() || request.routeOptions.config.pressureHandler === servedUnderPressure) return done()
      const delay = Math.round(loop.delayMs)
      done(new ServiceUnavailableError(`The server is overloaded: its event loop is delayed ${delay} ms (limit ${limit} ms); retry after ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS))
    })
  })
}, { name: 'under-pressure' })
