/**
 * Leases as Redis keys (`<prefix><name>`, holding the holder's id), for instances that share a
 * Redis: taken with SET NX PX, renewed by a script that extends the key only while it still holds
 * this holder's id (compare and PEXPIRE), released by one that deletes it only then (compare and
 * DEL). Expiry is on Redis's clock. Redis not answering within the link's budget is no answer
 * (lease-store.ts); every call is tried even while the link backs off after another operation's
 * failure: that backing off is about requests' latency, and a missed renewal could move the lease.
 */
import type { RedisLink, RedisScript } from 'pocketnet-client'
import type { LeaseStore } from './lease-store.js'

/** KEYS: the lease. ARGV: holder id, ttl. → 1 when extended (still this holder's), else 0. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`

/** KEYS: the lease. ARGV: holder id. → 1 when deleted (it was this holder's), else 0. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

export class RedisLeaseStore implements LeaseStore {
  readonly #link: RedisLink
  readonly #operation: string
  readonly #renew: RedisScript<number>
  readonly #release: RedisScript<number>

  /**
   * `operation`: what the link's metrics call the take (`<operation>`), the renewal
   * (`<operation>-renew`) and the release (`<operation>-release`).
   */
  constructor (link: RedisLink, operation = 'lease') {
    this.#link = link
    this.#operation = operation
    this.#renew = link.script(`${operation}-renew`, 1, RENEW)
    this.#release = link.script(`${operation}-release`, 1, RELEASE)
  }

  /** Renews first (the holder's usual case, one round trip), else tries to take it. */
  async claim (name: string, holder: string, ttlMs: number): Promise<boolean | undefined> {
    const key = this.#link.keyPrefix + name
    const renewed = await this.#renew([key], [holder, ttlMs], true)
    if (renewed === undefined) return undefined
    if (renewed === 1) return true
    const taken = await this.#link.run(this.#operation, redis => redis.set(key, holder, 'PX', ttlMs, 'NX'), true)
    return taken === undefined ? undefined : taken === 'OK'
  }

  async release (name: string, holder: string): Promise<void> {
    await this.#release([this.#link.keyPrefix + name], [holder], true)
  }
}
