/**
 * At-least-once delivery of the outbox's events (`outbox_events`): an invoice's transitions, and
 * entitlements granted and revoked (entitlements/entitlement-events.ts, for the consumers that
 * hear of them: the webhook sender). Each event gets an outbox row per consumer in the
 * transaction that made it; a consumer claims due rows (leased for `leaseMs`, so that a crash
 * mid-delivery hands them out again once the lease lapses), and acknowledges each once handled,
 * or puts it back for later. Several instances claim at once without taking the same rows.
 * Consumers must be idempotent: an event can come twice (use its `idempotencyKey`), and events of
 * one invoice handed to two instances may finish out of order (its `sequence` says which is newer).
 * The loop that does this for a consumer is src/outbox/outbox-consumer.ts.
 *
 * A row's `status`:
 *
 *   pending ──ack()──▶ delivered
 *      │ ▲
 *      │ └── claim() (leased: due again when the lease lapses), retryLater()
 *      └──giveUp()──▶ given_up   (left undelivered; an operator may set it back to pending)
 *
 * `available_at_ms` means "due at" for a pending row only: a claim pushes it forward by the
 * lease, retryLater() by the delay.
 */
import type { Database } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import { entitlementEventOfRow, isEntitlementEventType, type EntitlementEvent, type EntitlementEventRow } from '../entitlements/entitlement-events.js'
import { isPayoutEventType, payoutEventOfRow, type PayoutEvent, type PayoutEventRow } from '../payouts/payout-events.js'
import type { InvoiceEvent } from './invoice.js'
import { eventOfRow, type EventRow } from './invoice-rows.js'

/** What a row of the outbox is: to be delivered (due now or later), delivered, or given up. */
export type OutboxStatus = 'pending' | 'delivered' | 'given_up'

/** An event the outbox delivers: an invoice's, an entitlement's or a payout's (their `type`s tell them apart). */
export type OutboxEvent = InvoiceEvent | EntitlementEvent | PayoutEvent

/** An invoice's event: neither an entitlement's nor a payout's. */
export function isInvoiceEvent<E extends OutboxEvent> (event: E): event is E & InvoiceEvent {
  return !isEntitlementEventType(event.type) && !isPayoutEventType(event.type)
}

export type ClaimedEvent = OutboxEvent & {
  /** How many times it has been claimed by this consumer, this time included. */
  attempts: number
}

type OutboxEventRow = (EventRow | EntitlementEventRow | PayoutEventRow) & { grant_id: unknown, payout_id: unknown }

function outboxEventOfRow (row: OutboxEventRow): OutboxEvent {
  if (isEntitlementEventType(row.type)) return entitlementEventOfRow(row as EntitlementEventRow)
  if (isPayoutEventType(row.type)) return payoutEventOfRow(row as PayoutEventRow)
  return eventOfRow(row as EventRow)
}

export interface ClaimOptions {
  /** At most this many. Default 100. */
  limit?: number
  /** How long the claimed events stay with this caller before they are handed out again. Default 30 s. */
  leaseMs?: number
}

export interface OutboxBacklog {
  /** Undelivered events still to be tried, due now or later (`pending`). */
  pending: number
  /** Undelivered events the consumer gave up on (`given_up`, {@link PaymentOutbox.giveUp}). */
  givenUp: number
}

export class PaymentOutbox {
  readonly #db: Database
  readonly #now: () => number

  /** @param options.now milliseconds since the epoch. Default Date.now. */
  constructor (db: Database, options: { now?: () => number } = {}) {
    this.#db = db
    this.#now = options.now ?? Date.now
  }

  /** Due pending events of `consumer`, oldest first, leased to the caller: they stay pending, due when the lease lapses. */
  async claim (consumer: string, options: ClaimOptions = {}): Promise<ClaimedEvent[]> {
    const now = this.#now()
    const { rows } = await this.#db.query<OutboxEventRow & { attempts: number }>(
      `UPDATE outbox o SET available_at_ms = $2 + $4, attempts = o.attempts + 1
       FROM (SELECT event_id FROM outbox
             WHERE consumer = $1 AND status = 'pending' AND available_at_ms <= $2
             ORDER BY event_id LIMIT $3 FOR UPDATE SKIP LOCKED) due, outbox_events e
       WHERE o.consumer = $1 AND o.event_id = due.event_id AND e.id = o.event_id
       RETURNING e.id, e.invoice_id, e.sequence, e.grant_id, e.payout_id, e.type, e.payload, e.created_at_ms, o.attempts`,
      [consumer, now, options.limit ?? 100, options.leaseMs ?? 30_000]
    )
    return rows.map(row => ({ ...outboxEventOfRow(row), attempts: row.attempts })).sort((a, b) => a.id - b.id)
  }

  /**
   * Marks the event delivered to `consumer`; false when it already was (a second delivery's ack).
   * A given-up event delivered after all (an attempt that finished late) counts as delivered.
   */
  async ack (consumer: string, eventId: number): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      "UPDATE outbox SET status = 'delivered', delivered_at_ms = $3 WHERE consumer = $1 AND event_id = $2 AND status <> 'delivered'",
      [consumer, eventId, this.#now()]
    )
    return rowCount === 1
  }

  /** Hands the pending event out again no sooner than `delayMs` from now: a delivery that failed, with backoff. */
  async retryLater (consumer: string, eventId: number, delayMs: number): Promise<void> {
    await this.#db.query(
      "UPDATE outbox SET available_at_ms = $3 WHERE consumer = $1 AND event_id = $2 AND status = 'pending'",
      [consumer, eventId, this.#now() + delayMs]
    )
  }

  /**
   * Stops handing the event out: a consumer that tried it as often as it will (a webhook whose
   * receiver never took it). It stays undelivered, counted apart ({@link backlog}).
   */
  async giveUp (consumer: string, eventId: number): Promise<void> {
    await this.#db.query(
      "UPDATE outbox SET status = 'given_up' WHERE consumer = $1 AND event_id = $2 AND status = 'pending'",
      [consumer, eventId]
    )
  }

  /** When the next pending event of `consumer` falls due (milliseconds, maybe past), or undefined when none is pending. */
  async nextDueAt (consumer: string): Promise<number | undefined> {
    const { rows } = await this.#db.query<{ at: unknown }>(
      "SELECT min(available_at_ms) AS at FROM outbox WHERE consumer = $1 AND status = 'pending'",
      [consumer]
    )
    const at = rows[0]?.at
    return at === null || at === undefined ? undefined : safeInteger(at, 'available_at_ms')
  }

  /** Undelivered events of `consumer`: still to be tried, and given up on. Each count reads its own partial index. */
  async backlog (consumer: string): Promise<OutboxBacklog> {
    const { rows } = await this.#db.query<{ pending: number, given_up: number }>(
      `SELECT (SELECT count(*) FROM outbox WHERE consumer = $1 AND status = 'pending')::integer AS pending,
              (SELECT count(*) FROM outbox WHERE consumer = $1 AND status = 'given_up')::integer AS given_up`,
      [consumer]
    )
    return { pending: rows[0]?.pending ?? 0, givenUp: rows[0]?.given_up ?? 0 }
  }

  /** Events of `consumer` not delivered yet, due or not, given up or not. */
  async countUndelivered (consumer: string): Promise<number> {
    const { pending, givenUp } = await this.backlog(consumer)
    return pending + givenUp
  }
}
