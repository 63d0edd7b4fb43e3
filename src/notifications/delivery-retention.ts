/**
 * The deliveries' retention (NOTIFY_RETENTION_S): every `intervalMs`, settled deliveries
 * (delivered or given up) made longer ago than `retentionMs` are deleted, `batchSize` rows per
 * statement and a turn of the event loop between two statements, until a statement finds fewer:
 * at 10,000 notifications a minute the table would otherwise grow by 14 million rows a day, for
 * ever. Pending deliveries are work still to do and are never deleted here.
 *
 * Each instance prunes on its own: the statement skips rows another instance is deleting at that
 * moment (notification-store.ts), so two of them share the work rather than wait on each other.
 * A failed run is reported and the next one comes at the next interval.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { NotificationStore } from './notification-store.js'

/** Between two runs: a run's work grows with the interval, its cost per run does not. */
export const RETENTION_INTERVAL_MS = 600_000
/** Rows per statement: each statement holds the embedded database's one thread while it runs. */
export const RETENTION_BATCH_SIZE = 500

export interface DeliveryRetentionOptions {
  store: Pick<NotificationStore, 'pruneSettled'>
  /** How long a settled delivery is kept after it was made. */
  retentionMs: number
  /** Default {@link RETENTION_INTERVAL_MS}. */
  intervalMs?: number
  /** Default {@link RETENTION_BATCH_SIZE}. */
  batchSize?: number
  /** Milliseconds since the epoch, as the deliveries' times are. Default Date.now. */
  now?: () => number
  timers?: Timers
  /** A run deleted `deleted` rows (more than none). */
  onPruned?: (deleted: number) => void
  /** A run failed; the next one is at the next interval. */
  onError?: (error: unknown) => void
}

export class DeliveryRetention {
  readonly #options: DeliveryRetentionOptions
  readonly #intervalMs: number
  readonly #batchSize: number
  readonly #now: () => number
  readonly #timers: Timers
  #next: TimerHandle | undefined
  #running: Promise<void> | undefined
  #closed = false

  constructor (options: DeliveryRetentionOptions) {
    this.#options = options
    this.#intervalMs = options.intervalMs ?? RETENTION_INTERVAL_MS
    this.#batchSize = options.batchSize ?? RETENTION_BATCH_SIZE
    this.#now = options.now ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
  }

  /** The first run now, then one every interval until close(). */
  start (): void {
    this.#schedule(0)
  }

  /** Deletes what is past the retention now; how many rows. Throws what the database threw. */
  async runOnce (): Promise<number> {
    const before = this.#now() - this.#options.retentionMs
    let deleted = 0
    for (;;) {
      const count = await this.#options.store.pruneSettled(before, this.#batchSize)
      deleted += count
      if (count < this.#batchSize || this.#closed) return deleted
      // The service's answers between two statements.
      await nextTurn()
    }
  }

  /** Resolves once no run is going on (tests). */
  async whenIdle (): Promise<void> {
    await this.#running
  }

  /** No run after this one; resolves once a run in progress ended (at its current statement). */
  async close (): Promise<void> {
    this.#closed = true
    this.#timers.clearTimeout(this.#next)
    this.#next = undefined
    await this.#running
  }

  #schedule (delayMs: number): void {
    if (this.#closed) return
    this.#next = this.#timers.setTimeout(() => {
      this.#next = undefined
      this.#running = this.runOnce().then(
        deleted => { if (deleted > 0) this.#options.onPruned?.(deleted) },
        (error: unknown) => { this.#options.onError?.(error) }
      ).finally(() => {
        this.#running = undefined
        this.#schedule(this.#intervalMs)
      })
    }, delayMs)
  }
}
