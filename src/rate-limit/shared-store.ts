/**
 * The rate limit's counts in Redis, so that RATE_LIMIT_MAX holds across every instance: one
 * fixed window per client key in Redis, counted by all.
 *
 * Asking Redis on every request would put a round trip on the fast path's every answer, so an
 * instance takes a client's requests from Redis in batches (a script: at most what is left of
 * the client's `max`, never more) and spends them locally, synchronously. The batch starts at one
 * request and doubles while the same client keeps coming, up to 1 % of `max`: a client at a
 * normal pace costs a round trip per request, a busy one a round trip per hundred. Nobody
 * gets more than `max` in a window; a client spread over N instances may be refused up to
 * N × 1 % of `max` early (requests taken by one instance and not used there).
 *
 * When Redis is away or slow, each instance counts alone in its own store (store.ts) until it
 * is back: the limit is per instance meanwhile, never absent.
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import { growingLru } from '../growing-lru.js'
import type { RedisLink, RedisScript } from 'pocketnet-client'
import { FixedWindowStore, MAX_TRACKED_CLIENTS, type WindowCount, type WindowStore } from './store.js'

/** KEYS[1]: the client's window. ARGV: max, requests wanted, window ms. → {count after, granted, ms left}. */
const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local granted = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) - used)
if granted < 1 then granted = 1 end
local count = redis.call('INCRBY', KEYS[1], granted)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  ttl = tonumber(ARGV[3])
end
return {count, granted, ttl}`

/** Requests an instance holds for one client: what it may still answer, until when. */
interface Grant {
  /** The client's count in Redis of the request last answered from this grant. */
  count: number
  /** Requests taken from Redis and not yet used. */
  left: number
  endsAt: number
  /** How many to take next time. */
  batch: number
  /** A reservation in flight: requests of this client wait for it rather than start another. */
  pending?: Promise<unknown> | undefined
}

/** Largest batch, as a share of `max`. */
const BATCH_SHARE = 0.01

export class SharedWindowStore implements FastifyRateLimitStore, WindowStore {
  readonly #reserve: RedisScript<[number, number, number]>
  readonly #link: RedisLink
  readonly #prefix: string
  readonly #clock: () => number
  readonly #local: FixedWindowStore
  readonly #grants = growingLru<string, Grant>(MAX_TRACKED_CLIENTS)
  /** The store of each group of routes that count together (a route's `rateLimit.groupId`). */
  readonly #groups = new Map<string, SharedWindowStore>()

  /**
   * @param prefix this store's part of the key: one per set of limits (the global one, each route's own)
   * @param clock milliseconds, for the windows' ends as Redis tells them
   */
  constructor (link: RedisLink, prefix = 'rate:', clock: () => number = Date.now) {
    this.#link = link
    this.#prefix = link.keyPrefix + prefix
    this.#clock = clock
    this.#local = new FixedWindowStore(clock)
    this.#reserve = link.script('rate', 1, RESERVE)
  }

  take (key: string, windowMs: number, max: number): WindowCount | Promise<WindowCount> {
    const now = this.#clock()
    const grant = this.#grants.get(key)
    if (grant !== undefined && now < grant.endsAt) {
      // Requests left in the batch; or the client is over its limit, which lasts to the window's end.
      if (grant.left > 0 || grant.count > max) {
        if (grant.left > 0) grant.left--
        return { current: ++grant.count, ttl: grant.endsAt - now }
      }
      if (grant.pending !== undefined) return grant.pending.then(() => this.take(key, windowMs, max))
    }
    if (!this.#link.available) return this.#local.take(key, windowMs, max)
    return this.#take(key, windowMs, max, grant !== undefined && now < grant.endsAt ? grant.batch : 0)
  }

  incr (key: string, callback: (error: Error | null, result?: WindowCount) => void, timeWindow: number, max: number): void {
    const counted = this.take(key, timeWindow, max)
    if (counted instanceof Promise) counted.then(result => callback(null, result), callback)
    else callback(null, counted)
  }

  /**
   * A route with limits of its own counts apart: its method and path are part of the key, or its
   * `groupId`, for routes that count together (one store for the group, as for its local grants).
   * The plugin passes its merged limits, with the route under `routeInfo` (not the type it declares).
   */
  child (params: unknown): SharedWindowStore {
    const { routeInfo: route, groupId } = params as { routeInfo?: { method?: unknown, url?: unknown }, groupId?: unknown }
    if (typeof groupId !== 'string') return new SharedWindowStore(this.#link, `rate:${String(route?.method)} ${String(route?.url)}:`, this.#clock)
    let group = this.#groups.get(groupId)
    if (group === undefined) {
      group = new SharedWindowStore(this.#link, `rate:group:${groupId}:`, this.#clock)
      this.#groups.set(groupId, group)
    }
    return group
  }

  async #take (key: string, windowMs: number, max: number, lastBatch: number): Promise<WindowCount> {
    const batch = Math.max(1, Math.min(lastBatch * 2, Math.floor(max * BATCH_SHARE)))
    // A placeholder holds this client's other requests until the new grant is in place.
    let settled!: () => void
    const waiting: Grant = { count: 0, left: 0, endsAt: Infinity, batch: lastBatch, pending: new Promise<void>(resolve => { settled = resolve }) }
    this.#grants.set(key, waiting)
    try {
      const answer = await this.#reserve([this.#prefix + key], [max, batch, windowMs])
      if (answer === undefined) {
        this.#grants.delete(key)
        return this.#local.take(key, windowMs, max)
      }
      const [count, granted, ttl] = answer
      // This request is the first of the batch; the rest are spent locally.
      const first = count - granted + 1
      this.#grants.set(key, { count: first, left: first <= max ? granted - 1 : 0, endsAt: this.#clock() + ttl, batch })
      return { current: first, ttl }
    } finally {
      settled()
    }
  }
}
