/**
 * Reads the node's answer for each sighting (payment-sightings.ts), a few at a time, until every
 * one is read: the watcher's way of never forgetting a payment it was told of. A crowded block
 * (a thousand payments to the receiver) becomes a queue read `concurrency` at a time, not a
 * thousand node calls at once that the pool would shed. A read that fails is tried again with
 * backoff; a txid the node does not know yet, too, until `unknownForgetMs` after it was sighted.
 *
 * Runs on an injected clock and timers: it wakes when the watcher notes sightings (`wake()`),
 * when the next retry falls due, and at least every `pollMs` (sightings another instance noted,
 * leases that lapsed).
 */
import { backoffDelayMs, CoalescingRun, REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { PaymentSightings } from './payment-sightings.js'

/** What reading one txid found: the node's answer was recorded, or the node does not know it (yet). */
export type SightingRead = 'read' | 'unknown'

export interface SightingReaderLog {
  warn (fields: object, message: string): void
  info (fields: object, message: string): void
}

export interface SightingReaderOptions {
  sightings: PaymentSightings
  /** Reads the txid on chain and records what it proves (PaymentsService.onPayment). */
  read: (txid: string) => Promise<SightingRead>
  log: SightingReaderLog
  now?: () => number
  timers?: Timers
  /** In [0, 1), for the retries' jitter. Default Math.random. */
  random?: () => number
  /** Reads at once. Default 4: a node's share, never enough to be shed. */
  concurrency?: number
  /** The longest sleep between passes. Default 60 s. */
  pollMs?: number
  /** How long a txid no node knows is asked after again. Default a day. */
  unknownForgetMs?: number
}

/** The retries' backoff: from a second, doubling, up to five minutes. */
const RETRY = { minMs: 1000, maxMs: 300_000 }
/** A claimed read outlasts the node's deadline: no other instance reads it meanwhile. */
const LEASE_MS = 120_000

const messageOf = (err: unknown): string => err instanceof Error ? err.message : String(err)

export class SightingReader {
  readonly #sightings: PaymentSightings
  readonly #read: (txid: string) => Promise<SightingRead>
  readonly #log: SightingReaderLog
  readonly #now: () => number
  readonly #timers: Timers
  readonly #random: () => number
  readonly #concurrency: number
  readonly #pollMs: number
  readonly #unknownForgetMs: number
  /** The passes: one at a time, one more after it when woken meanwhile. */
  readonly #passes: CoalescingRun
  /** How long the last pass said to sleep. */
  #sleepMs = 0
  #stopped = false
  #timer: TimerHandle | undefined
  /** Reads that failed since the reader started: counted in the metrics. */
  failures = 0

  constructor (options: SightingReaderOptions) {
    this.#sightings = options.sightings
    this.#read = options.read
    this.#log = options.log
    this.#now = options.now ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
    this.#random = options.random ?? Math.random
    this.#concurrency = options.concurrency ?? 4
    this.#pollMs = options.pollMs ?? 60_000
    this.#unknownForgetMs = options.unknownForgetMs ?? 86_400_000
    this.#passes = new CoalescingRun(async () => { this.#sleepMs = await this.#pass() }, {
      onIdle: () => { this.#timer = this.#timers.setTimeout(() => { this.wake() }, this.#sleepMs) },
    })
  }

  /** Reads what is due now, then sleeps until the next retry falls due; called during a pass, another follows it. */
  wake (): void {
    if (this.#stopped) return
    this.#timers.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#passes.request()
  }

  /** Resolves once no pass runs (tests: before moving the clock). */
  whenIdle (): Promise<void> {
    return this.#passes.whenIdle()
  }

  /** Stops: no new read; the ones in flight end, and what is left is read after the next start. */
  async close (): Promise<void> {
    this.#stopped = true
    this.#timers.clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#passes.close()
  }

  /** Reads what is due; how long to sleep after. Never throws. */
  async #pass (): Promise<number> {
    try {
      for (;;) {
        if (this.#stopped) return this.#pollMs
        const claimed = await this.#sightings.claim(this.#concurrency, LEASE_MS)
        if (claimed.length === 0) break
        await Promise.all(claimed.map(sighting => this.#readOne(sighting.txid, sighting.sightedAtMs, sighting.attempts)))
      }
      const due = await this.#sightings.nextDueAt()
      if (due === undefined) return this.#pollMs
      // Due already, yet not claimable: another instance reads it. Soon, not in a busy loop.
      return Math.min(Math.max(due - this.#now(), RETRY.minMs), this.#pollMs)
    } catch (err) {
      // The database failed: what was claimed comes back when its lease lapses.
      this.#log.warn({ err: { message: messageOf(err) } }, 'Payments: the sightings could not be read from the database; they are tried again later')
      return this.#pollMs
    }
  }

  async #readOne (txid: string, sightedAtMs: number, attempts: number): Promise<void> {
    let outcome: SightingRead
    try {
      outcome = await this.#read(txid)
    } catch (err) {
      this.failures++
      const delayMs = backoffDelayMs(attempts, { ...RETRY, random: this.#random })
      // One line per sighting's first failure: a node that fails a thousand reads logs a thousand
      // lines once, not once per retry.
      if (attempts === 1) this.#log.warn({ txid, err: { message: messageOf(err) }, retryInMs: delayMs }, 'Payments: a payment to the receiver could not be read on chain; it is tried again')
      await this.#sightings.retryLater(txid, delayMs, messageOf(err))
      return
    }
    if (outcome === 'read') {
      await this.#sightings.done(txid)
    } else if (this.#now() - sightedAtMs >= this.#unknownForgetMs) {
      this.#log.info({ txid, attempts }, 'Payments: a sighted payment is still unknown to the node; it is no longer asked after')
      await this.#sightings.done(txid)
    } else {
      await this.#sightings.retryLater(txid, backoffDelayMs(attempts, { ...RETRY, random: this.#random }), 'the node does not know the transaction')
    }
  }
}
