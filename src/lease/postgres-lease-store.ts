/**
 * Leases in the database's `leases` table (a row per name: holder, expires_at_ms), for instances
 * that share a PostgreSQL server. Expiry is on the callers' clocks: instances' clocks should agree
 * to well within a lease's time to live. A failed statement rejects (lease-store.ts).
 */
import type { Sql } from '../db/database.js'
import type { LeaseStore } from './lease-store.js'

export class PostgresLeaseStore implements LeaseStore {
  readonly #sql: Sql
  readonly #now: () => number

  /** `clock`: milliseconds since the epoch, the same on every instance (default Date.now). */
  constructor (sql: Sql, now: () => number = Date.now) {
    this.#sql = sql
    this.#now = now
  }

  /** One statement: two instances asking at once cannot both get it. */
  async claim (name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.#now()
    const { rows } = await this.#sql.query(
      `INSERT INTO leases (name, holder, expires_at_ms) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at_ms = EXCLUDED.expires_at_ms
       WHERE leases.holder = EXCLUDED.holder OR leases.expires_at_ms <= $4
       RETURNING holder`,
      [name, holder, now + ttlMs, now]
    )
    return rows.length === 1
  }

  async release (name: string, holder: string): Promise<void> {
    await this.#sql.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder])
  }
}
