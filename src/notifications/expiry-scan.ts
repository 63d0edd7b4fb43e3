/**
 * Telling users that what they hold ends soon (NOTIFY_BEFORE_EXPIRY_S): every `intervalMs`, the
 * runs of grants whose end came within `beforeMs` since the last look are told to their holder,
 * with the id `grant:<id>:expiring:<end>`. The window a run is looked for in is the last
 * LOOKBACK_MS, shorter than the 24 hours an id stays a `duplicate`: each scan in it sends the same
 * id again, which the notifications refuse, and a user who was `rate_limited` is told at the next
 * scan. A renewal moves the end, and so the id: it is told again before its new end. A grant
 * written when its end was already that close (shorter than the notice) is not told ahead.
 *
 * With several instances on one PostgreSQL server, only the holder of the lease
 * `notify-expiry-scan` scans; the embedded database has one process, always the holder.
 */
import { randomBytes } from 'node:crypto'
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { Database, Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import { Lease } from '../lease/lease.js'
import { PostgresLeaseStore } from '../lease/postgres-lease-store.js'
import { expiryNotice, type NoticeText, type NoticeCounts } from './event-notices.js'
import type { NotificationsService } from './notifications-service.js'

/** How far back a run's notice time may lie and still be told: under the ids' 24 hours. */
export const LOOKBACK_MS = 12 * 3_600_000
/** The most runs told per scan; the rest at the next. */
const SCAN_LIMIT = 1000
const LEASE_NAME = 'notify-expiry-scan'

export interface EndingRun {
  /** The grant that makes the run's end (its latest). */
  grantId: number
  address: string
  sku: string
  expiresAtMs: number
}

/**
 * The runs of grants, not revoked, whose end is within `beforeMs` of `nowMs` and came within it in
 * the last `lookbackMs`, and whose latest grant was written before that: soonest end first.
 */
export async function runsEndingSoon (sql: Sql, nowMs: number, beforeMs: number, lookbackMs: number = LOOKBACK_MS): Promise<EndingRun[]> {
  const { rows } = await sql.query<{ id: unknown, address: string, sku: string, expires_at_ms: unknown }>(
    `SELECT g.id, g.address, g.sku, g.expires_at_ms FROM entitlement_grants g
     WHERE g.revoked_at_ms IS NULL AND g.expires_at_ms > $1 AND g.expires_at_ms <= $1 + $2
       AND g.expires_at_ms - $2 > $1 - $3 AND g.granted_at_ms < g.expires_at_ms - $2
       AND NOT EXISTS (SELECT 1 FROM entitlement_grants later
                       WHERE later.address = g.address AND later.sku = g.sku AND later.revoked_at_ms IS NULL AND later.id <> g.id
                         AND (later.expires_at_ms IS NULL OR later.expires_at_ms > g.expires_at_ms))
     ORDER BY g.expires_at_ms, g.id LIMIT $4`,
    [nowMs, beforeMs, lookbackMs, SCAN_LIMIT]
  )
  return rows.map(row => ({ grantId: safeInteger(row.id, 'id'), address: row.address, sku: row.sku, expiresAtMs: safeInteger(row.expires_at_ms, 'expires_at_ms') }))
}

export interface ExpiryScanLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

export interface ExpiryScanOptions {
  db: Database
  notifications: NotificationsService
  text: NoticeText & { beforeMs: number }
  log: ExpiryScanLog
  /** Between two scans. Default a minute. */
  intervalMs?: number
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number
  timers?: Timers
  /** Where what is told is counted (the metrics read it). */
  counts: NoticeCounts
}

export class ExpiryScan {
  readonly #options: ExpiryScanOptions
  readonly #now: () => number
  readonly #timers: Timers
  readonly #intervalMs: number
  /** Undefined on the embedded database: one process, always its turn. */
  readonly #lease: Lease | undefined
  #next: TimerHandle | undefined
  #scanning: Promise<void> | undefined
  #closed = false

  constructor (options: ExpiryScanOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#timers = options.timers ?? REAL_TIMERS
    this.#intervalMs = options.intervalMs ?? 60_000
    this.#lease = options.db.kind === 'embedded'
      ? undefined
      : new Lease({
        store: new PostgresLeaseStore(options.db, this.#now),
        name: LEASE_NAME,
        holder: `expiry-scan-${randomBytes(9).toString('base64url')}`,
        ttlMs: Math.max(3 * this.#intervalMs, 30_000),
        timers: this.#timers,
        onError: err => { options.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the expiry scan\'s lease could not be renewed; it is tried again') },
      })
  }

  async start (): Promise<void> {
    await this.#lease?.start()
    this.#schedule(0)
  }

  /** Scans once now, if this instance holds the turn; never throws. */
  async scan (): Promise<void> {
    if (this.#closed || (this.#lease !== undefined && !this.#lease.held)) return
    const { db, notifications, text, log } = this.#options
    try {
      for (const run of await runsEndingSoon(db, this.#now(), text.beforeMs)) {
        const { notification } = expiryNotice(run, text)
        const [result] = (await notifications.send(notification, { waitMs: 0 })).results
        const status = result?.status ?? 'failed'
        // Each scan in the window meets the same runs again: only what went out, or was held back, is counted and logged.
        if (status === 'duplicate' || status === 'not_registered') continue
        this.#options.counts.told.expiring[status]++
        log.info({ notificationId: notification.id, address: notification.to, sku: run.sku, status }, 'Notifications: an entitlement ending soon was told')
      }
      this.#options.counts.expiryScans++
    } catch (err) {
      log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'Notifications: the expiry scan failed; it runs again at the next interval')
    }
  }

  async close (): Promise<void> {
    this.#closed = true
    this.#timers.clearTimeout(this.#next)
    await this.#scanning
    await this.#lease?.close()
  }

  /** Resolves once no scan runs (tests). */
  async whenIdle (): Promise<void> {
    await this.#scanning
  }

  #schedule (delayMs: number): void {
    if (this.#closed) return
    this.#next = this.#timers.setTimeout(() => {
      this.#scanning = this.scan().finally(() => {
        this.#scanning = undefined
        this.#schedule(this.#intervalMs)
      })
    }, delayMs)
  }
}
