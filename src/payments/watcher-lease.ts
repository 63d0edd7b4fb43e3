/**
 * One watcher at a time across instances: with several instances on one PostgreSQL server, only
 * the holder of the database lease `payments-watcher` re-checks open payments and expires
 * invoices on each block. It renews the lease every third of its length and gives it up at close;
 * if it dies, the lease lapses and another instance takes it at its next try.
 *
 * Nothing breaks if two watch at once (a lease that lapsed mid-block, clocks that disagree): every
 * transition is one transaction guarded by constraints. The lease only saves the node and the
 * database the same work done by every instance.
 *
 * The embedded database belongs to one process (its data directory is locked), so that process
 * always holds the turn ({@link ALWAYS_HELD}): no lease row, no timer, and nothing to wait for
 * after a crash, where a row left by the dead process would hold the watcher back until it lapsed.
 */
import { randomBytes } from 'node:crypto'
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { Database } from '../db/database.js'
import { acquireLease, releaseLease } from '../db/lease.js'

export const WATCHER_LEASE_NAME = 'payments-watcher'
export const DEFAULT_WATCHER_LEASE_TTL_MS = 30_000

/** Whether this instance may do the work only one at a time should do. */
export interface WatcherTurn {
  readonly held: boolean
  start (): Promise<void>
  close (): Promise<void>
}

/** The only process on its database: always its turn. */
export const ALWAYS_HELD: WatcherTurn = {
  held: true,
  async start () {},
  async close () {},
}

export interface WatcherLeaseOptions {
  db: Database
  /** Unique per instance. Default: random. */
  holder?: string
  /** Default {@link WATCHER_LEASE_NAME}. */
  name?: string
  /** Default {@link DEFAULT_WATCHER_LEASE_TTL_MS}; renewed every third of it. */
  ttlMs?: number
  /** Milliseconds since the epoch; instances' clocks must agree to well within `ttlMs`. Default Date.now. */
  clock?: () => number
  /** Default REAL_TIMERS. */
  timers?: Timers
  /**
   * This instance took the lease after its first try: another instance stopped holding it, and
   * the work it may have missed can be done now. (At the first try, nothing was missed by anyone
   * that the next block does not do.)
   */
  onTakeover?: () => void
  /** A try failed (the database): the lease is still counted held until it would lapse. */
  onError?: (error: unknown) => void
}

export class WatcherLease implements WatcherTurn {
  readonly holder: string
  readonly #db: Database
  readonly #name: string
  readonly #ttlMs: number
  readonly #clock: () => number
  readonly #timers: Timers
  readonly #onTakeover: () => void
  readonly #onError: (error: unknown) => void
  /** Until when, on our clock, the lease is ours; 0 when it is not. */
  #until = 0
  #timer: TimerHandle | undefined
  #trying: Promise<void> | undefined
  #closed = false
  #tried = false

  constructor (options: WatcherLeaseOptions) {
    this.holder = options.holder ?? `watcher-${randomBytes(9).toString('base64url')}`
    this.#db = options.db
    this.#name = options.name ?? WATCHER_LEASE_NAME
    this.#ttlMs = options.ttlMs ?? DEFAULT_WATCHER_LEASE_TTL_MS
    this.#clock = options.clock ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
    this.#onTakeover = options.onTakeover ?? (() => {})
    this.#onError = options.onError ?? (() => {})
    if (!Number.isSafeInteger(this.#ttlMs) || this.#ttlMs < 3) throw new TypeError('ttlMs must be a whole number of milliseconds, at least 3')
  }

  /** True while the lease is ours by our clock: a renewal that failed does not extend it. */
  get held (): boolean {
    return this.#clock() < this.#until
  }

  /** Tries for the lease now, then again every third of its length. */
  start (): Promise<void> {
    return this.#tick()
  }

  /** Stops trying and gives the lease up, so that another instance need not wait for it to lapse. */
  async close (): Promise<void> {
    this.#closed = true
    this.#timers.clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#trying
    const held = this.held
    this.#until = 0
    if (held) await releaseLease(this.#db, this.#name, this.holder).catch(this.#onError)
  }

  /** Resolves once no try is running (tests: before moving the clock). */
  async whenIdle (): Promise<void> {
    await this.#trying
  }

  /** One try, then the next one set: both inside `#trying`, so that whenIdle() sees the timer set. */
  #tick (): Promise<void> {
    if (this.#closed) return Promise.resolve()
    this.#trying = this.#try().then(() => {
      if (!this.#closed) this.#timer = this.#timers.setTimeout(() => { this.#tick().catch(this.#onError) }, Math.floor(this.#ttlMs / 3))
    }).finally(() => { this.#trying = undefined })
    return this.#trying
  }

  async #try (): Promise<void> {
    const now = this.#clock()
    const wasHeld = this.held
    const first = !this.#tried
    this.#tried = true
    try {
      const got = await acquireLease(this.#db, { name: this.#name, holder: this.holder, ttlMs: this.#ttlMs, now })
      // Counted from before the statement: the lease can only have been taken later than `now`.
      this.#until = got ? now + this.#ttlMs : 0
    } catch (error) {
      this.#onError(error)
      return
    }
    if (this.held && !wasHeld && !first && !this.#closed) this.#onTakeover()
  }
}
