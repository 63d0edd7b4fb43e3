/**
 * One watcher at a time across instances: with several instances on one PostgreSQL server, only
 * the instance holding the database lease `payments-watcher` (lease.ts) re-checks open payments
 * and expires invoices on each block. The lease is renewed every third of its time to live and
 * released at close; if its holder dies, it lapses and another instance takes it at its next
 * question.
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
import type { Timers } from 'pocketnet-client'
import type { Sql } from '../db/database.js'
import { Lease } from '../lease/lease.js'
import { PostgresLeaseStore } from '../lease/postgres-lease-store.js'

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
  db: Sql
  /** The lease's row: default {@link WATCHER_LEASE_NAME}; the payouts' checks take their own (`payouts`). */
  name?: string
  /** Unique per instance. Default: random. */
  holder?: string
  /** Default {@link DEFAULT_WATCHER_LEASE_TTL_MS}. */
  ttlMs?: number
  /** Milliseconds since the epoch; instances' clocks must agree to well within `ttlMs`. Default Date.now. */
  now?: () => number
  /** Default REAL_TIMERS. */
  timers?: Timers
  /**
   * This instance took the lease after having been without it (another instance held it, or the
   * database was unreachable): the work it may have missed can be done now. Not at the first
   * answer: nothing was missed by anyone then that the next block does not do.
   */
  onTakeover?: () => void
  /** A question to the database failed: the lease stays as it was until a whole time to live passed without an answer. */
  onError?: (error: unknown) => void
}

/** The turn on a database server shared with other instances: the `payments-watcher` lease, or the one named. */
export function watcherLease (options: WatcherLeaseOptions): Lease {
  const onTakeover = options.onTakeover ?? (() => {})
  return new Lease({
    store: new PostgresLeaseStore(options.db, options.now),
    name: options.name ?? WATCHER_LEASE_NAME,
    holder: options.holder ?? `watcher-${randomBytes(9).toString('base64url')}`,
    ttlMs: options.ttlMs ?? DEFAULT_WATCHER_LEASE_TTL_MS,
    timers: options.timers,
    onError: options.onError,
    onChange (state, previous) {
      if (state === 'held' && previous !== 'waiting') onTakeover()
    },
  })
}
