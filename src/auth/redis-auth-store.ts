/**
 * The sign-in store in Redis (auth-store.ts says what it keeps), so that any instance accepts a
 * challenge or a token another issued, and a revoked token or a used challenge is gone for all.
 *
 * Each kind is a sorted set of ids scored by expiry (ms since the epoch) beside a hash of their
 * values, changed only by the scripts below, so that each operation is atomic: of two instances
 * taking the same challenge, one gets it. Adding drops expired ids first (a few per call) and
 * then, when the kind is full, its soonest-to-expire ids (`evict`) or nothing (`refuse`).
 * Times come from the instance's clock, as do the expiries it checks.
 *
 * Fails closed: an operation Redis could not answer within REDIS_TIMEOUT_MS throws
 * AuthStoreUnavailableError, never a guess.
 */
import type { RedisLink, RedisScript } from 'pocketnet-client'
import { AuthStoreUnavailableError, type AuthKind, type AuthKindLimits, type AuthStore } from './auth-store.js'

/** KEYS: expiries, values. ARGV: id, value, expiresAt, now, max, evict (1|0). → 1 added, 0 present, -1 full. */
const ADD = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[4], 'LIMIT', 0, 64)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[5]) + 1
if over > 0 then
  if ARGV[6] ~= '1' then return -1 end
  local oldest = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  redis.call('ZREM', KEYS[1], unpack(oldest))
  redis.call('HDEL', KEYS[2], unpack(oldest))
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`

/** KEYS: expiries, values. ARGV: id, now. → the value, or false when absent or expired. */
const GET = `
local expiresAt = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiresAt or tonumber(expiresAt) <= tonumber(ARGV[2]) then return false end
return redis.call('HGET', KEYS[2], ARGV[1])`

/** KEYS: expiries, values. ARGV: id, now. → the value it removed, or false when absent or expired. */
const TAKE = `
local expiresAt = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiresAt then return false end
local value = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if tonumber(expiresAt) <= tonumber(ARGV[2]) then return false end
return value`

export class RedisAuthStore implements AuthStore {
  readonly #add: RedisScript<number>
  readonly #get: RedisScript<string | null>
  readonly #take: RedisScript<string | null>
  readonly #limits: Record<AuthKind, AuthKindLimits>
  readonly #prefix: string
  readonly #now: () => number

  /** @param now milliseconds since the epoch (tests inject it) */
  constructor (link: RedisLink, limits: Record<AuthKind, AuthKindLimits>, now: () => number = Date.now) {
    this.#add = link.script('auth-add', 2, ADD)
    this.#get = link.script('auth-get', 2, GET)
    this.#take = link.script('auth-take', 2, TAKE)
    this.#limits = limits
    this.#prefix = `${link.keyPrefix}auth:`
    this.#now = now
  }

  #keys (kind: AuthKind): string[] {
    return [`${this.#prefix}${kind}:expiries`, `${this.#prefix}${kind}:values`]
  }

  async add (kind: AuthKind, id: string, value: string, expiresAt: number): Promise<boolean> {
    const { max, whenFull } = this.#limits[kind]
    const added = await this.#add(this.#keys(kind), [id, value, expiresAt, this.#now(), max, whenFull === 'evict' ? 1 : 0])
    if (added === undefined) throw new AuthStoreUnavailableError(kind, 'unreachable')
    if (added === -1) throw new AuthStoreUnavailableError(kind, 'full')
    return added === 1
  }

  async get (kind: AuthKind, id: string): Promise<string | undefined> {
    return this.#answer(kind, await this.#get(this.#keys(kind), [id, this.#now()]))
  }

  async take (kind: AuthKind, id: string): Promise<string | undefined> {
    return this.#answer(kind, await this.#take(this.#keys(kind), [id, this.#now()]))
  }

  #answer (kind: AuthKind, answer: string | null | undefined): string | undefined {
    if (answer === undefined) throw new AuthStoreUnavailableError(kind, 'unreachable')
    return answer ?? undefined
  }
}
