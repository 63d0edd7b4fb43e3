/**
 * The rate limit's counts: a fixed window per client key, `max` requests, then denied until the
 * window (which starts at the client's first request) ends. It is a store for
 * @fastify/rate-limit (its `incr`/`child` interface), and it also counts synchronously for the
 * fast path, which answers in front of Fastify and cannot wait on a promise: both paths count in
 * this one store. @fastify/rate-limit's own LocalStore would do for Fastify alone, but it reads
 * Date.now(), where tests need a clock of their own.
 *
 * Windows are kept in an LRU: memory stays bounded however many addresses clients use; a client
 * pushed out by that many newer ones starts a new window.
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import type { LRUCache } from 'lru-cache'
import { growingLru } from '../growing-lru.js'

interface Window {
  count: number
  endsAt: number
}

/** What @fastify/rate-limit reads: the count so far in this window and the milliseconds left of it. */
export interface WindowCount {
  current: number
  ttl: number
}

export const MAX_TRACKED_CLIENTS = 100_000

/** Counts one request of a client key: at once, or (shared-store.ts, in Redis) when Redis answers. */
export interface WindowStore {
  take (key: string, windowMs: number, max: number): WindowCount | Promise<WindowCount>
}

export class FixedWindowStore implements FastifyRateLimitStore, WindowStore {
  readonly #windows: LRUCache<string, Window>
  readonly #clock: () => number
  /** The store of each group of routes that count together (a route's `rateLimit.groupId`). */
  readonly #groups = new Map<string, FixedWindowStore>()

  /** @param clock milliseconds; only differences are used, so a monotonic clock will do. */
  constructor (clock: () => number = Date.now, maxClients = MAX_TRACKED_CLIENTS) {
    this.#clock = clock
    this.#windows = growingLru(maxClients)
  }

  /** Counts one request of `key` in a window of `windowMs` (`max` is the caller's to apply). */
  take (key: string, windowMs: number, _max?: number): WindowCount {
    const now = this.#clock()
    let window = this.#windows.get(key)
    if (window === undefined || now >= window.endsAt) {
      window = { count: 0, endsAt: now + windowMs }
      this.#windows.set(key, window)
    }
    window.count++
    return { current: window.count, ttl: window.endsAt - now }
  }

  incr (key: string, callback: (error: Error | null, result?: WindowCount) => void, timeWindow: number): void {
    callback(null, this.take(key, timeWindow))
  }

  /**
   * A route with limits of its own counts in a store of its own; routes of one `groupId` in one
   * store together (the plugin adds the group to the key, but makes a store per route).
   */
  child (params?: unknown): FixedWindowStore {
    const groupId = (params as { groupId?: unknown } | undefined)?.groupId
    if (typeof groupId !== 'string') return new FixedWindowStore(this.#clock)
    let group = this.#groups.get(groupId)
    if (group === undefined) {
      group = new FixedWindowStore(this.#clock)
      this.#groups.set(groupId, group)
    }
    return group
  }
}
