/**
 * At-least-once delivery of invoice events. Each event gets an outbox row per consumer in the
 * transaction that made it; a consumer claims due rows (leased for `leaseMs`, so that a crash
 * mid-delivery hands them out again once the lease lapses), and acknowledges each once handled,
 * or puts it back for later. Several instances claim at once without taking the same rows.
 * Consumers must be idempotent: an event can come twice (use its `idempotencyKey`), and events of
 * one invoice handed to two instances may finish out of order (its `sequence` says which is newer).
 */
import type { Database } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import type { InvoiceEvent } from './invoice.js'
import { eventOfRow, type EventRow } from './invoice-rows.js'

export interface ClaimedEvent extends InvoiceEvent {
  /** How many times it has been claimed by this consumer, this time included. */
  attempts: number
}

export interface ClaimOptions {
  /** At most this many. Default 100. */
  limit?: number
  /** How long the claimed events stay with this caller before they are handed out again. Default 30 s. */
  leaseMs?: number
}

/**
 * Where a given-up event's `available_at_ms` is put: beyond any clock, so that it is never due
 * again, yet stays undelivered (and can be handed out again by setting it back).
 */
export const GIVEN_UP_AT_MS = Number.MAX_SAFE_INTEGER

export interface OutboxBacklog {
  /** Undelivered events still to be tried, due now or later. */
  pending: number
  /** Undelivered events the consumer gave up on ({@link PaymentOutbox.giveUp}). */
  givenUp: number
}

export class PaymentOutbox {
  readonly #db: Database
  readonly #clock: () => number

  constructor (db: Database, options: { clock?: () => number } = {}) {
    this.#db = db
    this.#clock = options.clock ?? Date.now
  }

  /** Due, undelivered events of `consumer`, oldest first, leased to the caller. */
  async claim (consumer: string, options: ClaimOptions = {}): Promise<ClaimedEvent[]> {
    const now = this.#clock()
    const { rows } = await this.#db.query<EventRow & { attempts: number }>(
      `UPDATE outbox o SET available_at_ms = $2 + $4, attempts = o.attempts + 1
       FROM (SELECT event_id FROM outbox
             WHERE consumer = $1 AND delivered_at_ms IS NULL AND available_at_ms <= $2
             ORDER BY event_id LIMIT $3 FOR UPDATE SKIP LOCKED) due, payment_events e
       WHERE o.consumer = $1 AND o.event_id = due.event_id AND e.id = o.event_id
       RETURNING e.id, e.invoice_id, e.sequence, e.type, e.payload, e.created_at_ms, o.attempts`,
      [consumer, now, options.limit ?? 100, options.leaseMs ?? 30_000]
    )
    return rows.map(row => ({ ...eventOfRow(row), attempts: row.attempts })).sort((a, b) => a.id - b.id)
  }

  /** Marks the event delivered to `consumer`; false when it already was (a second delivery's ack). */
  async ack (consumer: string, eventId: number): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'UPDATE outbox SET delivered_at_ms = $3 WHERE consumer = $1 AND event_id = $2 AND delivered_at_ms IS NULL',
      [consumer, eventId, this.#clock()]
    )
    return rowCount === 1
  }

  /** Hands the event out again no sooner than `delayMs` from now: a delivery that failed, with backoff. */
  async retryLater (consumer: string, eventId: number, delayMs: number): Promise<void> {
    await this.#db.query(
      'UPDATE outbox SET available_at_ms = $3 WHERE consumer = $1 AND event_id = $2 AND delivered_at_ms IS NULL',
      [consumer, eventId, this.#clock() + delayMs]
    )
  }

  /**
   * Stops handing the event out: a consumer that tried it as often as it will (a webhook whose
   * receiver never took it). It stays undelivered, counted apart ({@link backlog}).
   */
  async giveUp (consumer: string, eventId: number): Promise<void> {
    await this.#db.query(
      'UPDATE outbox SET available_at_ms = $3 WHERE consumer = $1 AND event_id = $2 AND delivered_at_ms IS NULL',
      [consumer, eventId, GIVEN_UP_AT_MS]
    )
  }

  /** When the next undelivered event of `consumer` falls due (milliseconds, maybe past), or undefined when none will. */
  async nextDueAt (consumer: string): Promise<number | undefined> {
    const { rows } = await this.#db.query<{ at: unknown }>(
      'SELECT min(available_at_ms) AS at FROM outbox WHERE consumer = $1 AND delivered_at_ms IS NULL AND available_at_ms < $2',
      [consumer, GIVEN_UP_AT_MS]
    )
    const at = rows[0]?.at
    return at === null || at === undefined ? undefined : safeInteger(at, 'available_at_ms')
  }

  /** Undelivered events of `consumer`: still to be tried, and given up on. */
  async backlog (consumer: string): Promise<OutboxBacklog> {
    const { rows } = await this.#db.query<{ pending: number, given_up: number }>(
      `SELECT count(*) FILTER (WHERE available_at_ms < $2)::integer AS pending, count(*) FILTER (WHERE available_at_ms >= $2)::integer AS given_up
       FROM outbox WHERE consumer = $1 AND delivered_at_ms IS NULL`,
      [consumer, GIVEN_UP_AT_MS]
    )
    return { pending: rows[0]?.pending ?? 0, givenUp: rows[0]?.given_up ?? 0 }
  }

  /** Events of `consumer` not delivered yet, due or not. */
  async countUndelivered (consumer: string): Promise<number> {
    const { rows } = await this.#db.query<{ count: number }>('SELECT count(*)::integer AS count FROM outbox WHERE consumer = $1 AND delivered_at_ms IS NULL', [consumer])
    return rows[0]?.count ?? 0
  }
}
