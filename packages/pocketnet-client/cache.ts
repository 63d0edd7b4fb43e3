/**
 * Answers kept in memory, per method, and identical calls in flight shared.
 *
 * - Keyed by method and the canonical positional params (the method table's order), so that
 *   `{a, b}` and `{b, a}` are one entry.
 * - A time to live per method; 0 turns caching off for that method (calls in flight are still
 *   shared). Errors are never kept.
 * - Bounded by entries and by bytes (the size of the node's answer), so that endless unique
 *   keys cannot grow memory.
 * - Methods whose answer depends on the chain tip are dropped when the pool sees a new block.
 * - With `serveStale`, an answer past its time to live is still given, for as long again,
 *   while one refresh runs in the background: a popular key never makes its callers wait.
 * - A caller that gives up does not cancel the upstream call for the others.
 * - A layer that keeps a rendering of an answer (an HTTP response) asks `reuse(value)` whether the
 *   answer is still the fresh cached one before serving its rendering again.
 * - With a second level (redis/shared-answers.ts), a miss asks it before the nodes: other instances'
 *   answers and calls in flight are shared too. It stays behind this one: a hit never leaves the process.
 */
import { LRUCache } from 'lru-cache'
import { RPC_TABLE } from './methods/table.js'
import { cacheTtlFromBlocks } from './methods/table-spec.js'
import type { Fetch, SharedAnswers } from './redis/shared-answers.js'

/** Time to live per method, in milliseconds. */
export type CacheTtls = Record<string, number>

/**
 * Time to live per method, in milliseconds; methods not listed are not cached. Every method the
 * node caches gets one second per block it does (at most a minute: table-spec.ts). The four the
 * service's routes use are set by hand: a node caches them itself for one block (getnodeinfo,
 * getuserprofile) or 60 blocks (search, getcontent), and the times here stay well below, so
 * that new posts and scores show soon.
 */
export const DEFAULT_CACHE_TTL_MS: Readonly<CacheTtls> = {
  ...cacheTtlFromBlocks(RPC_TABLE),
  getnodeinfo: 5000,
  getuserprofile: 60_000,
  search: 30_000,
  getcontent: 60_000,
}

/**
 * Methods whose answer changes with each block: the node itself caches them for one block
 * (getnodeinfo, getuserprofile, getcomments, getrawtransaction …). A new block drops them.
 */
const FOLLOWS_TIP: ReadonlySet<string> = new Set(Object.entries(RPC_TABLE).filter(([, method]) => method.cacheBlocks === 1).map(([name]) => name))

export type CacheOutcome = 'hit' | 'stale' | 'miss' | 'shared'

export interface CacheOptions {
  /** Per method; a method not listed is not cached. */
  ttlMs: CacheTtls
  maxEntries: number
  maxBytes: number
  /** Answer past the time to live, for as long again, while one refresh runs. Default false. */
  serveStale?: boolean
  /** Clock for time to live; default performance. */
  perf?: { now (): number }
  /** Called on every lookup, for metrics. Must not throw. */
  onLookup?: ((method: string, outcome: CacheOutcome) => void) | undefined
  /** Asked on a miss of a cached method, before the loader. */
  shared?: SharedAnswers | undefined
  /** The best chain height known: answers that follow the tip are shared per height. */
  height?: (() => number | undefined) | undefined
}

/** What a loader answers: the value and the size of the node's answer in bytes. */
export interface Loaded<T> {
  value: T
  bytes: number
}

interface Entry {
  method: string
  key: string
  loaded: Loaded<unknown>
  /** Set when the store lets go of the entry (evicted, expired, replaced, dropped at a new block). */
  dropped: boolean
  /** Until when (on the cache's clock) the answer is fresh; after that it is stale. */
  freshUntil: number
}

export class ResultCache {
  readonly #ttlMs: CacheTtls
  readonly #serveStale: boolean
  readonly #clock: { now (): number }
  readonly #lru: LRUCache<string, Entry>
  /** Loads in flight, cached methods or not: identical calls join them. */
  readonly #inFlight = new Map<string, Promise<unknown>>()
  readonly #onLookup: CacheOptions['onLookup']
  readonly #shared: CacheOptions['shared']
  readonly #height: () => number | undefined
  /** The entry of each cached answer object, for reuse(). */
  readonly #entryOf = new WeakMap<object, Entry>()
  /** Counts new blocks, so that a load that began before one does not keep a tip answer after it. */
  #blocks = 0

  constructor (options: CacheOptions) {
    this.#ttlMs = options.ttlMs
    this.#serveStale = options.serveStale ?? false
    this.#clock = options.perf ?? performance
    this.#onLookup = options.onLookup
    this.#shared = options.shared
    this.#height = options.height ?? (() => undefined)
    // lru-cache as the store only, not its fetch(): one in-flight map serves cached and uncached
    // methods alike; fetch() rejects the callers of a load in flight with its own "deleted" when
    // the cache is cleared (on close); and it gives each miss an AbortController.
    this.#lru = new LRUCache<string, Entry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: entry => Math.max(1, entry.loaded.bytes),
      ttl: 60_000,
      // Read the clock on every lookup (it is cheap) rather than caching it for a tick.
      ttlResolution: 0,
      ...(options.perf ? { perf: options.perf } : {}),
      dispose: entry => { entry.dropped = true },
    })
  }

  /** Key for a method and its positional params. */
  static key (method: string, params: readonly unknown[]): string {
    return `${method}\n${JSON.stringify(params)}`
  }

  /** The cached value, or `load()`'s, shared with identical calls in flight. */
  get<T> (method: string, key: string, load: Fetch<T>): Promise<T> {
    const ttl = this.#ttlMs[method] ?? 0
    if (ttl > 0) {
      const entry = this.#lru.get(key)
      if (entry !== undefined) {
        if (this.#clock.now() < entry.freshUntil) {
          this.#onLookup?.(method, 'hit')
        } else {
          this.#onLookup?.(method, 'stale')
          // A failed refresh keeps nothing, and the stale answer serves until its window ends.
          if (!this.#inFlight.has(key)) this.#load(method, key, load, ttl).catch(() => {})
        }
        return Promise.resolve(entry.loaded.value as T)
      }
    }
    const existing = this.#inFlight.get(key)
    if (existing !== undefined) {
      this.#onLookup?.(method, 'shared')
      return existing as Promise<T>
    }
    this.#onLookup?.(method, 'miss')
    return this.#load(method, key, load, ttl)
  }

  /**
   * Whether `value` (an answer this cache gave) is still the fresh cached answer of its call.
   * If it is, this counts as a hit, as the call would have: the caller is about to serve it again.
   */
  reuse (value: object): boolean {
    const entry = this.#entryOf.get(value)
    if (entry === undefined || entry.dropped || this.#clock.now() >= entry.freshUntil) return false
    // Keeps a popular answer at the young end of the LRU, as a call would.
    this.#lru.get(entry.key)
    this.#onLookup?.(entry.method, 'hit')
    return true
  }

  /** Drops the answers that depend on the chain tip. */
  onNewBlock (): void {
    this.#blocks++
    for (const key of this.#lru.keys()) {
      if (FOLLOWS_TIP.has(key.slice(0, key.indexOf('\n')))) this.#lru.delete(key)
    }
  }

  get size (): number {
    return this.#lru.size
  }

  get bytes (): number {
    return this.#lru.calculatedSize
  }

  clear (): void {
    this.#lru.clear()
  }

  #load<T> (method: string, key: string, load: Fetch<T>, ttl: number): Promise<T> {
    const blocks = this.#blocks
    const keep = (): boolean => blocks === this.#blocks || !FOLLOWS_TIP.has(method)
    const shared = this.#shared
    const loading: Promise<Loaded<T> & { freshForMs?: number }> = ttl > 0 && shared !== undefined
      ? shared.load({ method, key, ttlMs: ttl, height: FOLLOWS_TIP.has(method) ? this.#height() : undefined, keep }, load)
      : load()
    const call = loading.then(loaded => {
      if (ttl > 0 && keep()) {
        // An answer from the second level is fresh for what is left of its time there.
        const freshMs = Math.min(ttl, loaded.freshForMs ?? ttl)
        const entry: Entry = { method, key, loaded, dropped: false, freshUntil: this.#clock.now() + freshMs }
        this.#lru.set(key, entry, { ttl: Math.max(1, this.#serveStale ? freshMs + ttl : freshMs) })
        if (typeof loaded.value === 'object' && loaded.value !== null) this.#entryOf.set(loaded.value, entry)
      }
      return loaded.value
    }).finally(() => this.#inFlight.delete(key))
    this.#inFlight.set(key, call)
    return call
  }
}
