/**
 * Sightings: transactions the node event source reported paying the receiver, kept in the
 * database until the node's answer for each was read. A read that failed (the node answered 502,
 * shed the call, timed out) is tried again later with backoff instead of being forgotten with
 * the block that brought it; a txid no node knows yet (a mempool that has not reached the node
 * we ask) is tried again too, until it is too old to matter. Reading is claimed like the
 * outbox's rows (leased, `FOR UPDATE SKIP LOCKED`), so instances sharing a server share the work
 * without reading one txid twice at once.
 */
import { safeInteger, type Database } from '../db/database.js'

export interface ClaimedSighting {
  txid: string
  sightedAtMs: number
  /** How many reads were claimed for it, this one included. */
  attempts: number
}

const TXID = /^[0-9a-f]{64}$/
/** The longest error text kept with a sighting: for operators, not a log of its own. */
const MAX_ERROR_CHARS = 200

export class PaymentSightings {
  readonly #db: Database
  readonly #now: () => number

  constructor (db: Database, now: () => number = Date.now) {
    this.#db = db
    this.#now = now
  }

  /**
   * Records the txids as sighted, due at once; ones already recorded are left as they are. One
   * statement, whatever the count: a block of a thousand payments is one write.
   */
  async note (txids: readonly string[]): Promise<void> {
    const fresh = [...new Set(txids)].filter(txid => TXID.test(txid))
    if (fresh.length === 0) return
    const now = this.#now()
    await this.#db.query(
      `INSERT INTO payment_sightings (txid, sighted_at_ms, available_at_ms)
       SELECT txid, $2, $2 FROM unnest($1::text[]) AS txid
       ON CONFLICT (txid) DO NOTHING`,
      [fresh, now]
    )
  }

  /** Due sightings, the oldest due first, leased to the caller for `leaseMs`. */
  async claim (limit: number, leaseMs: number): Promise<ClaimedSighting[]> {
    const now = this.#now()
    const { rows } = await this.#db.query<{ txid: string, sighted_at_ms: unknown, attempts: number }>(
      `UPDATE payment_sightings s SET available_at_ms = $1 + $3, attempts = s.attempts + 1
       FROM (SELECT txid FROM payment_sightings WHERE available_at_ms <= $1
             ORDER BY available_at_ms, txid LIMIT $2 FOR UPDATE SKIP LOCKED) due
       WHERE s.txid = due.txid
       RETURNING s.txid, s.sighted_at_ms, s.attempts`,
      [now, limit, leaseMs]
    )
    return rows.map(row => ({ txid: row.txid, sightedAtMs: safeInteger(row.sighted_at_ms, 'sighted_at_ms'), attempts: row.attempts }))
  }

  /** The node's answer was read and recorded (or the sighting is past caring): forgotten. */
  async done (txid: string): Promise<void> {
    await this.#db.query('DELETE FROM payment_sightings WHERE txid = $1', [txid])
  }

  /** Read again no sooner than `delayMs` from now; `error` says why, for operators. */
  async retryLater (txid: string, delayMs: number, error: string): Promise<void> {
    await this.#db.query(
      'UPDATE payment_sightings SET available_at_ms = $2, last_error = $3 WHERE txid = $1',
      [txid, this.#now() + delayMs, error.slice(0, MAX_ERROR_CHARS)]
    )
  }

  /** When the next sighting falls due (milliseconds, maybe past), or undefined when none is left. */
  async nextDueAt (): Promise<number | undefined> {
    const { rows } = await this.#db.query<{ at: unknown }>('SELECT min(available_at_ms) AS at FROM payment_sightings')
    const at = rows[0]?.at
    return at === null || at === undefined ? undefined : safeInteger(at, 'available_at_ms')
  }

  /** Sightings not read yet. */
  async count (): Promise<number> {
    const { rows } = await this.#db.query<{ count: number }>('SELECT count(*)::integer AS count FROM payment_sightings')
    return rows[0]?.count ?? 0
  }
}
