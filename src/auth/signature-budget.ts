/**
 * How many signature checks this process makes per second, and who gets them. Each check is a
 * millisecond or more of one core's time, taken on the event loop (bench/results.md, "Sign-in"),
 * so a flood of forged signatures, each checked, would slow every other request of the process.
 * Past the budget, sign-in answers 503 at once; the rest of the API is unaffected. Per process,
 * like the CPU it protects.
 *
 * Shared fairly, so that one client or one network cannot spend everyone's checks: a check is
 * made only while the client, the client's network and the process each have one left. The
 * client is its rate-limit key (an IPv4 address, an IPv6 /64); its network the IPv4 /24 or IPv6
 * /48 around it (http/client-network.ts), since whoever has one /64 usually has the 65,536 of a
 * /48. Each is a token bucket that holds one second's worth (at least one check): a client gets
 * CLIENT_SHARE of the budget, a network NETWORK_SHARE, the process all of it. So a flood from one network takes at
 * most a tenth of the checks, and the other networks share the rest; docs/sign-in.md has the sums.
 *
 * Buckets are kept for the MAX_TRACKED most recently seen clients and networks. One pushed out
 * comes back full: that favours only its owner, and the process's bucket still bounds the total.
 */
import type { LRUCache } from 'lru-cache'
import { growingLru } from '../growing-lru.js'
import { networkOf } from '../http/client-network.js'

/** A client's share of the budget per second (at least one check a second). */
export const CLIENT_SHARE = 1 / 20
/** A network's share of the budget per second (at least one check a second). */
export const NETWORK_SHARE = 1 / 10
/** Clients, and networks, whose buckets are kept. */
export const MAX_TRACKED = 10_000

/** Who has no check left: the client, its network, or the whole process. */
export type BudgetScope = 'client' | 'network' | 'process'

export interface BudgetRefusal {
  scope: BudgetScope
  /** Whole seconds until that bucket has a check again (at least 1). */
  retryAfterSeconds: number
}

class TokenBucket {
  #tokens: number
  #updatedAt: number

  constructor (readonly perSecond: number, readonly capacity: number, now: number) {
    this.#tokens = capacity
    this.#updatedAt = now
  }

  /** Milliseconds until a check is there, 0 when one is (after adding what came since the last look). */
  waitMs (now: number): number {
    this.#tokens = Math.min(this.capacity, this.#tokens + Math.max(0, now - this.#updatedAt) * this.perSecond / 1000)
    this.#updatedAt = now
    return this.#tokens >= 1 ? 0 : (1 - this.#tokens) * 1000 / this.perSecond
  }

  take (): void {
    this.#tokens--
  }
}

export class SignatureBudget {
  readonly #now: () => number
  readonly #clientRate: number
  readonly #networkRate: number
  readonly #process: TokenBucket
  readonly #clients = growingLru<string, TokenBucket>(MAX_TRACKED)
  readonly #networks = growingLru<string, TokenBucket>(MAX_TRACKED)

  /**
   * @param perSecond the process's checks per second (AUTH_SIGNATURE_CHECKS_PER_S)
   * @param now milliseconds (tests inject it)
   */
  constructor (perSecond: number, now: () => number) {
    this.#now = now
    this.#clientRate = Math.max(1, perSecond * CLIENT_SHARE)
    this.#networkRate = Math.max(1, perSecond * NETWORK_SHARE)
    this.#process = new TokenBucket(perSecond, Math.max(1, perSecond), now())
  }

  /**
   * One check for `client` (its rate-limit key), counted against the client, its network and the
   * process, in that order: undefined when all three allow it and it is counted; otherwise the
   * first that does not, and nothing is counted.
   */
  take (client: string): BudgetRefusal | undefined {
    const now = this.#now()
    const buckets: Array<[BudgetScope, TokenBucket]> = [
      ['client', this.#bucket(this.#clients, client, this.#clientRate, now)],
      ['network', this.#bucket(this.#networks, networkOf(client), this.#networkRate, now)],
      ['process', this.#process],
    ]
    for (const [scope, bucket] of buckets) {
      const waitMs = bucket.waitMs(now)
      if (waitMs > 0) return { scope, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }
    }
    for (const [, bucket] of buckets) bucket.take()
    return undefined
  }

  #bucket (buckets: LRUCache<string, TokenBucket>, key: string, perSecond: number, now: number): TokenBucket {
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      bucket = new TokenBucket(perSecond, perSecond, now)
      buckets.set(key, bucket)
    }
    return bucket
  }
}
