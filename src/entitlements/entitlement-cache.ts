/**
 * What each user holds, kept in process so that a route's check costs no query: per address, the
 * end of each SKU it holds (`Infinity`: for good), read from the database on first use. An entry
 * is dropped when this instance grants or revokes for the address, when another instance says it
 * did (cluster-invalidation.ts), and at the latest `ttlMs` after it was read: the bound on how
 * stale an instance can be when a message from another is lost. A subscription ends on time
 * whatever the entry's age: the check compares the end with `now`.
 *
 * A read that an invalidation overtook is not kept: it may predate the change.
 */
import type { LRUCache } from 'lru-cache'
import { growingLru } from '../growing-lru.js'

/** The end of each SKU an address holds, in milliseconds since the epoch; `Infinity`: for good. */
export type HeldUntil = ReadonlyMap<string, number>

type Entry = { held: HeldUntil } | { reading: Promise<HeldUntil> }

export interface EntitlementCacheOptions {
  /** Reads what an address holds from the database. */
  read: (address: string) => Promise<HeldUntil>
  /** How long an entry is kept at most; 0: never kept (every check reads the database). */
  ttlMs: number
  /** Addresses kept at most, the least recently used dropped first. */
  maxUsers: number
  /** Milliseconds on a monotonic clock, for the entries' age. Default `performance.now`. */
  clock?: () => number
}

export class EntitlementCache {
  readonly #entries: LRUCache<string, Entry> | undefined
  readonly #read: (address: string) => Promise<HeldUntil>
  readonly #clock: () => number

  constructor (options: EntitlementCacheOptions) {
    this.#read = options.read
    this.#clock = options.clock ?? (() => performance.now())
    this.#entries = options.ttlMs > 0
      ? growingLru<string, Entry>(options.maxUsers, { ttl: options.ttlMs, ttlResolution: 0, perf: { now: this.#clock } })
      : undefined
  }

  /** What `address` holds, kept if it was read recently; reads in flight for it are shared. */
  held (address: string): Promise<HeldUntil> | HeldUntil {
    const entries = this.#entries
    if (entries === undefined) return this.#read(address)
    const entry = entries.get(address)
    if (entry !== undefined) return 'held' in entry ? entry.held : entry.reading
    // Aged from before the read: what it says is at most ttlMs old when it is dropped.
    const start = this.#clock()
    const reading = this.#read(address)
    const pending: Entry = { reading }
    entries.set(address, pending, { start })
    reading.then(held => {
      if (entries.peek(address) === pending) entries.set(address, { held }, { start })
    }, () => {
      if (entries.peek(address) === pending) entries.delete(address)
    })
    return reading
  }

  /** Drops what is kept for `address`, and any read of it in flight: the next check reads again. */
  invalidate (address: string): void {
    this.#entries?.delete(address)
  }

  /** Addresses kept now (metrics, tests). */
  get size (): number {
    return this.#entries?.size ?? 0
  }
}
