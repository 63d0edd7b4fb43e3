/**
 * Named leases in the database: work that one instance at a time must do (following the chain
 * for payments) goes to whoever holds the lease, renews it while working, and passes to another
 * instance once it lapses. Times are the caller's clock; instances' clocks should agree to well
 * within a lease's length.
 */
import type { Sql } from './database.js'

export interface LeaseRequest {
  /** What the lease is for, such as `payments-watcher`. */
  name: string
  /** Who asks: unique per instance (a random id per process). */
  holder: string
  ttlMs: number
  /** Now, in milliseconds, on the caller's clock. */
  now: number
}

/**
 * Takes the lease, or renews it for its holder; true when `holder` holds it until `now + ttlMs`,
 * false while another holder's lease runs. One statement: two instances asking at once cannot
 * both get it.
 */
export async function acquireLease (sql: Sql, request: LeaseRequest): Promise<boolean> {
  const { rows } = await sql.query(
    `INSERT INTO leases (name, holder, expires_at_ms) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at_ms = EXCLUDED.expires_at_ms
     WHERE leases.holder = EXCLUDED.holder OR leases.expires_at_ms <= $4
     RETURNING holder`,
    [request.name, request.holder, request.now + request.ttlMs, request.now]
  )
  return rows.length === 1
}

/** Gives the lease up, if `holder` holds it, so that another instance need not wait for it to lapse. */
export async function releaseLease (sql: Sql, name: string, holder: string): Promise<void> {
  await sql.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder])
}
