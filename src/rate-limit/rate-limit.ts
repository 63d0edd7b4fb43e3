/**
 * Per-client rate limit, by @fastify/rate-limit: RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW
 * and client address (http/client-address.ts: X-Forwarded-For only from TRUST_PROXY proxies;
 * IPv6 clients by their /64, as the plugin does), answered 429 in the envelope with Retry-After;
 * every counted answer carries X-RateLimit-Limit, -Remaining and -Reset.
 *
 * Every route counts unless its config says `rateLimit: false` (the health probes); a route with
 * `rateLimit: { max, timeWindow }` gets the plugin's limits of its own. Requests no route's hook
 * sees count too (`app.limitRequest`, called by http/unrouted.ts): unknown URLs, malformed URLs,
 * CORS preflights, requests without Host.
 *
 * The fast path answers in front of Fastify, so it counts too, in the same store
 * (`app.countRequest`), and keeps its count on the request: when it hands a request on to
 * Fastify after all, the hook here reads that count instead of counting the request again.
 *
 * A client that goes on asking once refused has its further 429s held before they are sent
 * (RATE_LIMIT_HOLD_MS, refusal-hold.ts), so that asking as fast as it can gets it few answers
 * and costs the others little.
 *
 * The store is in-process (store.ts), or in Redis when REDIS_URL is set (shared-store.ts), so
 * that the limit holds across every instance.
 */
import type { IncomingMessage } from 'node:http'
import rateLimit, { normalizeIP, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { Timers } from 'pocketnet-client'
import type { RateDecision } from '../fast-path/fast-path.js'
import { mirroredByReplay } from '../fast-path/hook-ledger.js'
import { clientAddressResolver, parseTrustProxy } from '../http/client-address.js'
import { HttpError } from '../http/errors.js'
import { SharedWindowStore } from './shared-store.js'
import { FixedWindowStore, type WindowCount } from './store.js'
import { RefusalHold } from './refusal-hold.js'
import { parseWindow } from './window.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a raw request in the rate limit, as the fast path does before it answers (later, when the count is in Redis). */
    countRequest: (request: IncomingMessage) => RateDecision | Promise<RateDecision>
    /**
     * Counts a request that no route's hook will count (an unknown URL, a CORS preflight), as a
     * route's hook does: sets the headers, throws the 429. A request is counted once, however
     * often this and the route's hook run for it.
     */
    limitRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    /** The client's key in the rate limit: its address (TRUST_PROXY applied), an IPv6 one's /64. Sign-in shares its checks by it. */
    clientKey: (request: IncomingMessage) => string
  }
}

/** Where the fast path keeps its count on a request it hands on to Fastify. */
const COUNTED = Symbol('rate decision')
type Counted = IncomingMessage & { [COUNTED]?: RateDecision }
/** Set on a request the plugin's own handler has counted. */
const LIMITED = Symbol('rate limited')
type Limited = FastifyRequest & { [LIMITED]?: true }

function tooManyRequests (max: number, resetSeconds: number): HttpError {
  return new HttpError(429, 'Too many requests', `Rate limit of ${max} requests exceeded: retry in ${resetSeconds} s`)
}

export interface RateLimitOptions {
  /** Milliseconds, for the windows; default Date.now. */
  clock?: (() => number) | undefined
  /** The timers that hold refusals (refusal-hold.ts); default Node's. */
  timers?: Timers | undefined
}

export default fp<RateLimitOptions>(async (app, { clock, timers }) => {
  const max = app.miniAppConfig.RATE_LIMIT_MAX
  const windowMs = parseWindow(app.miniAppConfig.RATE_LIMIT_WINDOW)
  const clientAddress = clientAddressResolver(parseTrustProxy(app.miniAppConfig.TRUST_PROXY))
  const keyOf = (request: IncomingMessage): string => {
    const address = clientAddress(request)
    // An IPv4 address is already in normalizeIP's form; its IPv6 test is a large regular
    // expression, a visible share of a fast-path answer's CPU (bench/results.md, "Findings").
    return address.includes(':') ? normalizeIP(address) : address
  }
  const store = app.redis === undefined ? new FixedWindowStore(clock) : new SharedWindowStore(app.redis, 'rate:', clock)
  // The plugin makes its store with `new`; a constructor that returns an object gives that
  // object, so the plugin counts in the very store the fast path counts in.
  const SharedStore = function () { return store } as unknown as FastifyRateLimitStoreCtor

  await app.register(rateLimit, {
    global: false,
    max,
    timeWindow: windowMs,
    store: SharedStore,
    keyGenerator: request => keyOf(request.raw),
    errorResponseBuilder: (_request, context) => tooManyRequests(context.max, Math.ceil(context.ttl / 1000)),
  })

  const decide = (request: IncomingMessage, { current, ttl }: WindowCount): RateDecision => {
    const decision = { allowed: current <= max, limit: max, remaining: Math.max(0, max - current), resetSeconds: Math.ceil(ttl / 1000) }
    ;(request as Counted)[COUNTED] = decision
    return decision
  }
  app.decorate('countRequest', (request: IncomingMessage): RateDecision | Promise<RateDecision> => {
    const counted = store.take(keyOf(request), windowMs, max)
    return counted instanceof Promise ? counted.then(count => decide(request, count)) : decide(request, counted)
  })

  // The plugin's own handler, with the global limits: it counts, sets the headers, throws the 429.
  const limit = app.rateLimit() as unknown as (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  const countOnce = mirroredByReplay(async function countOnce (request: FastifyRequest, reply: FastifyReply) {
    const counted = (request.raw as Counted)[COUNTED]
    if (counted === undefined) {
      if ((request as Limited)[LIMITED]) return
      ;(request as Limited)[LIMITED] = true
      return limit(request, reply)
    }
    reply.header('x-ratelimit-limit', counted.limit)
    reply.header('x-ratelimit-remaining', counted.remaining)
    reply.header('x-ratelimit-reset', counted.resetSeconds)
    if (!counted.allowed) {
      reply.header('retry-after', counted.resetSeconds)
      throw tooManyRequests(max, counted.resetSeconds)
    }
  })
  app.addHook('onRoute', (route) => {
    // false: not counted; an object: the plugin's own hook, with the route's own limits.
    if (route.config?.rateLimit !== undefined) return
    route.onRequest = [...[route.onRequest ?? []].flat(), countOnce]
  })
  // Every 429, the global limit's and a route's own, whichever hook refused it.
  const refusals = new RefusalHold({ holdMs: app.miniAppConfig.RATE_LIMIT_HOLD_MS, windowMs, clock, timers })
  const holdRefusal: onSendHookHandler = function holdRefusal (request, reply, payload, done) {
    if (reply.statusCode !== 429) return done(null, payload)
    // A refused body is not read: the answer closes the connection (http/unrouted.ts).
    if (!request.raw.complete) reply.header('connection', 'close')
    const verdict = refusals.refuse(keyOf(request.raw))
    if (verdict === 'close') reply.header('connection', 'close')
    if (verdict !== 'hold') return done(null, payload)
    const { release } = refusals.hold(keyOf(request.raw), () => {
      reply.raw.off('close', release)
      done(null, payload)
    })
    // A client that gives up while held frees its place at once.
    reply.raw.once('close', release)
  }
  // A 200 is never held, and the fast path answers nothing else.
  app.addHook('onSend', mirroredByReplay(holdRefusal))
  app.addHook('preClose', (done) => { refusals.releaseAll(); done() })

  // For what no route's hook counts: http/unrouted.ts counts unknown URLs and preflights with it.
  app.decorate('limitRequest', countOnce)
  app.decorate('clientKey', keyOf)
}, { name: 'rate-limit', dependencies: ['redis'] })
