/**
 * The ingest lease (REDIS_URL): one instance at a time follows the chain for every instance on
 * the same Redis, so that N instances cost the nodes one WebSocket and the calls of one.
 *
 * - The lease is a key, `events:ingest`, holding the holder's id (random per process): taken with
 *   SET NX PX, renewed every third of its time to live by a script that extends it only if it is
 *   still this holder's (compare and PEXPIRE), released on shutdown by one that deletes it only
 *   if it is (compare and DEL). An instance that dies stops renewing: its lease lapses, and
 *   another takes it at its next attempt.
 * - Roles: `holder` (follows the chain), `follower` (another instance holds the lease: it follows
 *   nothing and gets the chain events from the shared log), `alone` (Redis has not answered for a
 *   whole lease: it follows the chain for itself, as without REDIS_URL), `waiting` (no answer yet
 *   since the start). When Redis answers again, the lease is contested again: one holds it, the
 *   others follow and close their sockets.
 * - The holder also notes the last block it reported (`events:ingest:tip`), so that an instance
 *   taking over without having seen a block itself resumes from there instead of the tip.
 *
 * Time is the injected timers' (tests move them by hand); the lease's own expiry is Redis's.
 */
import { randomUUID } from 'node:crypto'
import type { RedisLink, RedisScript, TimerHandle, Timers } from 'pocketnet-client'

export type IngestRole = 'waiting' | 'holder' | 'follower' | 'alone'

export interface IngestLeaseOptions {
  /** The lease's time to live in Redis, in milliseconds; renewed every third of it. */
  ttlMs: number
  timers: Timers
  /** How long the last block reported is kept in Redis for a new holder, in milliseconds. */
  tipTtlMs: number
  /** This process's id in Redis. Default: random. */
  holderId?: string
  /** Called on each change of role, in order. Must not throw. */
  onRole?: (role: IngestRole, previous: IngestRole) => void
}

/** A block as the holder notes it for the next one. */
export interface LeaseTip {
  height: number
  blockHash: string
}

const LEASE = 'events:ingest'
const TIP = 'events:ingest:tip'
/** Until Redis first answers (the link connects in the background at start), it is asked this often. */
const STARTUP_RETRY_MS = 250

/** KEYS: the lease. ARGV: holder id, ttl. → 1 when extended (still this holder's), else 0. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`

/** KEYS: the lease. ARGV: holder id. → 1 when deleted (it was this holder's), else 0. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

const BLOCK_HASH = /^[0-9a-f]{64}$/

export class IngestLease {
  readonly holderId: string
  /** Times this instance took the lease or lost it, for metrics. */
  changes = 0
  readonly #link: RedisLink
  readonly #options: IngestLeaseOptions
  readonly #key: string
  readonly #renew: RedisScript<number>
  readonly #release: RedisScript<number>
  #role: IngestRole = 'waiting'
  /** Whether the key may hold this process's id: renewed (not taken) next time, and released at the end. */
  #mayHold = false
  /** Milliseconds of attempts without an answer since Redis last answered. */
  #silentMs = 0
  #timer: TimerHandle | undefined
  #attempt: Promise<void> | undefined
  #closed = false

  constructor (link: RedisLink, options: IngestLeaseOptions) {
    this.#link = link
    this.#options = options
    this.holderId = options.holderId ?? randomUUID()
    this.#key = link.keyPrefix + LEASE
    this.#renew = link.script('ingest-lease-renew', 1, RENEW)
    this.#release = link.script('ingest-lease-release', 1, RELEASE)
  }

  get role (): IngestRole {
    return this.#role
  }

  /** Whether this instance must follow the chain now: it holds the lease, or Redis is away. */
  get ingesting (): boolean {
    return this.#role === 'holder' || this.#role === 'alone'
  }

  /** Makes the first attempt, and resolves once it is answered (or not); then goes on by itself. */
  async start (): Promise<void> {
    await this.#attemptThenSchedule(0)
  }

  /** Stops the attempts and releases the lease if this instance holds it. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#options.timers.clearTimeout(this.#timer)
    await this.#attempt
    // Even while the link backs off after a failure: a lease left behind delays the next holder.
    if (this.#mayHold) await this.#release([this.#key], [this.holderId], true)
  }

  /** Notes the last block this instance reported, for whoever holds the lease next (fire and forget). */
  noteTip (tip: LeaseTip): void {
    this.#link.run('ingest-tip', redis => redis.set(this.#link.keyPrefix + TIP, `${tip.height}:${tip.blockHash}`, 'PX', this.#options.tipTtlMs)).catch(() => {})
  }

  /** The last block the holders reported, when Redis has it. */
  async readTip (): Promise<LeaseTip | undefined> {
    const value = await this.#link.run('ingest-tip', redis => redis.get(this.#link.keyPrefix + TIP))
    const [height, blockHash] = (value ?? '').split(':')
    const tip = { height: Number(height), blockHash: blockHash ?? '' }
    return Number.isSafeInteger(tip.height) && tip.height >= 1 && BLOCK_HASH.test(tip.blockHash) ? tip : undefined
  }

  /** How long until the next attempt: a third of the lease, sooner until Redis first answers. */
  get #intervalMs (): number {
    const renewMs = Math.max(1, Math.floor(this.#options.ttlMs / 3))
    return this.#role === 'waiting' ? Math.min(STARTUP_RETRY_MS, renewMs) : renewMs
  }

  async #attemptThenSchedule (sinceLastMs: number): Promise<void> {
    if (this.#closed) return
    this.#attempt = this.#attemptOnce(sinceLastMs)
    await this.#attempt
    this.#attempt = undefined
    if (this.#closed) return
    const delayMs = this.#intervalMs
    this.#timer = this.#options.timers.setTimeout(() => { this.#attemptThenSchedule(delayMs).catch(() => {}) }, delayMs)
  }

  async #attemptOnce (sinceLastMs: number): Promise<void> {
    const holds = await this.#holdsLease()
    if (this.#closed) return
    if (holds !== undefined) {
      this.#silentMs = 0
      this.#become(holds ? 'holder' : 'follower')
      return
    }
    this.#silentMs += sinceLastMs
    // A whole lease without an answer: a lease of this instance's has lapsed, and another
    // instance's can no longer be seen; so each follows the chain for itself.
    if (this.#silentMs >= this.#options.ttlMs) this.#become('alone')
  }

  /**
   * Renews the lease when this instance may hold it, else tries to take it: whether it holds it
   * now, undefined when Redis did not answer. Tried even while the link backs off after another
   * operation's failure: that is about requests' latency, and a missed renewal could move the lease.
   */
  async #holdsLease (): Promise<boolean | undefined> {
    const { ttlMs } = this.#options
    if (this.#mayHold) {
      const renewed = await this.#renew([this.#key], [this.holderId, ttlMs], true)
      if (renewed === undefined) return undefined
      if (renewed === 1) return true
      this.#mayHold = false
    }
    // Set before asking: a SET that timed out here may still have been applied there.
    this.#mayHold = true
    const taken = await this.#link.run('ingest-lease', redis => redis.set(this.#key, this.holderId, 'PX', ttlMs, 'NX'), true)
    if (taken === undefined) return undefined
    this.#mayHold = taken === 'OK'
    return this.#mayHold
  }

  #become (role: IngestRole): void {
    const previous = this.#role
    if (role === previous) return
    this.#role = role
    if (role === 'holder' || previous === 'holder') this.changes++
    this.#options.onRole?.(role, previous)
  }
}
