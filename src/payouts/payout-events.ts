/**
 * A payout's transitions as outbox events (`outbox_events`, docs/payouts.md, "Webhooks"):
 * `payoutPending` (signed and stored), `payoutBroadcast`, `payoutConfirmed`, `payoutFailed`, each
 * written in the transaction that moves the payout, with an outbox row per consumer that hears of
 * them (the webhook sender, with PAYMENT_WEBHOOK_URL), so that a crash loses both the move and its
 * event or neither. Each payout is told each state once (a database constraint). With no such
 * consumer nothing is written: the payout and its log are their own record.
 */
import type { Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import { payoutView, type Payout, type PayoutState, type PayoutView } from './payout.js'

export type PayoutEventType = 'payoutPending' | 'payoutBroadcast' | 'payoutConfirmed' | 'payoutFailed'

const TYPE_OF_STATE: Record<PayoutState, PayoutEventType> = { pending: 'payoutPending', broadcast: 'payoutBroadcast', confirmed: 'payoutConfirmed', failed: 'payoutFailed' }
const STATE_OF_TYPE = Object.fromEntries(Object.entries(TYPE_OF_STATE).map(([state, type]) => [type, state])) as Record<PayoutEventType, PayoutState>

export interface PayoutEvent {
  /** Increasing in the order events were written, with the invoices' and entitlements' events. */
  id: number
  type: PayoutEventType
  payoutId: string
  /** `payout:<id>:<state>`: the same for every delivery of this event. */
  idempotencyKey: string
  /** The payout as it was when it reached this state. */
  payout: PayoutView
  createdAtMs: number
}

export function isPayoutEventType (type: string): type is PayoutEventType {
  return type in STATE_OF_TYPE
}

/** An outbox event of a payout, not of an invoice or an entitlement. */
export function isPayoutEvent (event: { type: string }): event is PayoutEvent {
  return isPayoutEventType(event.type)
}

export interface PayoutEventRow {
  id: unknown
  payout_id: string
  type: PayoutEventType
  payload: PayoutView
  created_at_ms: unknown
}

export function payoutEventOfRow (row: PayoutEventRow): PayoutEvent {
  return {
    id: safeInteger(row.id, 'id'),
    type: row.type,
    payoutId: row.payout_id,
    idempotencyKey: `payout:${row.payout_id}:${STATE_OF_TYPE[row.type]}`,
    payout: row.payload,
    createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms'),
  }
}

/** Writes the event of `payout`'s state, just written, and its outbox rows, in the caller's transaction; nothing when no consumer hears of payouts. */
export async function writePayoutEvent (sql: Sql, payout: Payout, consumers: readonly string[], nowMs: number): Promise<void> {
  if (consumers.length === 0) return
  const { rows } = await sql.query<{ id: unknown }>(
    'INSERT INTO outbox_events (payout_id, type, payload, created_at_ms) VALUES ($1, $2, $3, $4) RETURNING id',
    [payout.id, TYPE_OF_STATE[payout.state], payoutView(payout), nowMs]
  )
  const eventId = safeInteger(rows[0]?.id, 'id')
  for (const consumer of consumers) await sql.query('INSERT INTO outbox (event_id, consumer) VALUES ($1, $2)', [eventId, consumer])
}
