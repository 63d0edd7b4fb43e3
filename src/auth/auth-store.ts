/**
 * Where sign-in keeps what it must remember for a while: challenges it issued, sessions it
 * opened, Signature headers it accepted. Each kind is a bounded set of ids, each with a value and
 * an absolute expiry on the service's wall clock; an expired id is gone.
 *
 * In process (this file, lru-cache), or in Redis (redis-auth-store.ts) when REDIS_URL is set, so
 * that every instance accepts what another issued. The Redis store fails closed: when Redis cannot
 * answer, it throws {@link AuthStoreUnavailableError} (503), never "not found" or "accepted".
 */
import type { LRUCache } from 'lru-cache'
import { growingLru } from '../growing-lru.js'
import { ServiceUnavailableError } from '../http/errors.js'

export type AuthKind = 'challenge' | 'session' | 'signature' | 'ticket'

/** What a kind does when it is full: forget its oldest entry, or refuse the new one. */
export type WhenFull = 'evict' | 'refuse'

export interface AuthKindLimits {
  max: number
  /**
   * `evict` suits entries whose loss fails closed (a challenge or a session: the user signs in
   * again). `refuse` is for the replay cache, where forgetting an entry would let it be replayed.
   */
  whenFull: WhenFull
}

export interface AuthStore {
  /** Adds `id` with `value` until `expiresAt`; false when `id` is there already, unexpired. */
  add (kind: AuthKind, id: string, value: string, expiresAt: number): Promise<boolean>
  /** The value of `id`, unexpired. */
  get (kind: AuthKind, id: string): Promise<string | undefined>
  /** Removes `id` and answers its value if it was there unexpired: of concurrent takers, one gets it. */
  take (kind: AuthKind, id: string): Promise<string | undefined>
}

/** 503 with Retry-After: the store could not answer (Redis away or slow), or a `refuse` kind is full; nothing was decided. */
export class AuthStoreUnavailableError extends ServiceUnavailableError {
  constructor (readonly kind: AuthKind, reason: 'unreachable' | 'full') {
    super(reason === 'full'
      ? `Sign-in is refusing new ${kind}s for a moment: too many are pending`
      : 'Sign-in is unavailable for a moment: its shared store cannot be reached', 1)
    this.name = 'AuthStoreUnavailableError'
  }
}

/** How often a full refusing kind may be swept for expired entries. */
const SWEEP_INTERVAL_MS = 1000

interface Entry {
  value: string
  expiresAt: number
}

export class MemoryAuthStore implements AuthStore {
  readonly #kinds = new Map<AuthKind, { cache: LRUCache<string, Entry>, whenFull: WhenFull }>()
  readonly #now: () => number
  #nextSweep = 0

  /** @param now milliseconds since the epoch (tests inject it) */
  constructor (limits: Record<AuthKind, AuthKindLimits>, now: () => number = Date.now) {
    this.#now = now
    for (const [kind, { max, whenFull }] of Object.entries(limits) as Array<[AuthKind, AuthKindLimits]>) {
      // lru-cache drops an entry once its ttl passed on our clock; ttlResolution 0 reads the
      // clock on every check instead of reusing a reading for a millisecond.
      const cache = growingLru<string, Entry>(max, { ttlResolution: 0, perf: { now } })
      this.#kinds.set(kind, { cache, whenFull })
    }
  }

  #of (kind: AuthKind): { cache: LRUCache<string, Entry>, whenFull: WhenFull } {
    const found = this.#kinds.get(kind)
    if (found === undefined) throw new TypeError(`no limits were given for ${kind}`)
    return found
  }

  async add (kind: AuthKind, id: string, value: string, expiresAt: number): Promise<boolean> {
    const { cache, whenFull } = this.#of(kind)
    const ttl = expiresAt - this.#now()
    if (ttl <= 0) return true
    if (this.#live(cache.get(id)) !== undefined) return false
    // An evicting kind lets lru-cache drop its least recently used entry. A refusing one first
    // looks for expired entries to drop, at most once a second: a sweep reads every entry, and
    // a full cache must not make each refused request cost that.
    if (whenFull === 'refuse' && cache.size >= cache.maxSize) {
      if (this.#now() >= this.#nextSweep) this.#dropExpired(cache)
      if (cache.size >= cache.maxSize) throw new AuthStoreUnavailableError(kind, 'full')
    }
    cache.set(id, { value, expiresAt }, { ttl })
    return true
  }

  async get (kind: AuthKind, id: string): Promise<string | undefined> {
    return this.#live(this.#of(kind).cache.get(id))
  }

  async take (kind: AuthKind, id: string): Promise<string | undefined> {
    const { cache } = this.#of(kind)
    const entry = cache.get(id)
    cache.delete(id)
    return this.#live(entry)
  }

  /** Drops the kind's expired entries: lru-cache would only drop each when it is next read. */
  #dropExpired (cache: LRUCache<string, Entry>): void {
    const now = this.#now()
    this.#nextSweep = now + SWEEP_INTERVAL_MS
    const expired = [...cache.entries()].filter(([, entry]) => entry.expiresAt <= now).map(([id]) => id)
    for (const id of expired) cache.delete(id)
  }

  /** An entry's value until its expiry, exclusive, as in Redis; lru-cache would keep it that very millisecond. */
  #live (entry: Entry | undefined): string | undefined {
    return entry !== undefined && entry.expiresAt > this.#now() ? entry.value : undefined
  }
}
