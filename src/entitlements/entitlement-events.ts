/**
 * Grants and revocations as outbox events (`outbox_events`, docs/entitlements.md, "Events and
 * webhooks"): each is written in the transaction that grants or revokes, with an outbox row per
 * consumer that hears of them (the webhook sender, with PAYMENT_WEBHOOK_URL), so that a crash
 * loses both the change and its event or neither. With no such consumer nothing is written: the
 * grants are their own record. The app's handlers (`app.payments.on`) are of invoices and get none:
 * an invoice's grant is on its `confirmed` event, and server code knows what it granted.
 */
import type { Sql } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import type { Entitlement, Grant } from './entitlement.js'

export type EntitlementEventType = 'entitlementGranted' | 'entitlementRevoked'

export const ENTITLEMENT_EVENT_TYPES: readonly EntitlementEventType[] = ['entitlementGranted', 'entitlementRevoked']

/** What an entitlement event tells, as stored in its payload. */
export interface EntitlementFacts {
  address: string
  sku: string
  /** Granted: when this grant was made. Revoked: when the latest grant revoked was made. */
  grantedAtMs: number
  /** Granted: its end, renewals before it included. Revoked: the end the revocation took away. Null: never. */
  expiresAtMs: number | null
  /** The invoice whose confirmation made the grant (the latest revoked one); null for server code's. */
  invoiceId: string | null
  /** Granted: server code's reason (null for an invoice's grant). Revoked: why it was revoked. */
  reason: string | null
}

export interface EntitlementEvent extends EntitlementFacts {
  /** Increasing in the order events were written, with the invoices' events. */
  id: number
  type: EntitlementEventType
  /** The grant made; for a revocation, the latest grant it ended (each grant is revoked at most once). */
  grantId: number
  /**
   * `grant:<grantId>:granted` or `grant:<grantId>:revoked`: the same for every delivery of this
   * event. A grant is told granted once and revoked once (a database constraint).
   */
  idempotencyKey: string
  createdAtMs: number
}

export function isEntitlementEventType (type: string): type is EntitlementEventType {
  return (ENTITLEMENT_EVENT_TYPES as readonly string[]).includes(type)
}

/** An outbox event of an entitlement, not of an invoice. */
export function isEntitlementEvent (event: { type: string }): event is EntitlementEvent {
  return isEntitlementEventType(event.type)
}

export interface EntitlementEventRow {
  id: unknown
  grant_id: unknown
  type: EntitlementEventType
  payload: EntitlementFacts
  created_at_ms: unknown
}

export function entitlementEventOfRow (row: EntitlementEventRow): EntitlementEvent {
  const grantId = safeInteger(row.grant_id, 'grant_id')
  const { address, sku, grantedAtMs, expiresAtMs, invoiceId, reason } = row.payload
  return {
    id: safeInteger(row.id, 'id'),
    type: row.type,
    grantId,
    idempotencyKey: `grant:${grantId}:${row.type === 'entitlementGranted' ? 'granted' : 'revoked'}`,
    address,
    sku,
    grantedAtMs,
    expiresAtMs,
    invoiceId,
    reason,
    createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms'),
  }
}

/**
 * Writes the event of a grant just written, and its outbox rows, in the caller's transaction.
 * @returns the event, or undefined when no consumer hears of grants (nothing written)
 */
export async function writeGrantedEvent (sql: Sql, grant: Grant, consumers: readonly string[], nowMs: number): Promise<EntitlementEvent | undefined> {
  const { address, sku, grantedAtMs, expiresAtMs, invoiceId, reason } = grant
  return writeEvent(sql, 'entitlementGranted', grant.id, { address, sku, grantedAtMs, expiresAtMs, invoiceId, reason }, consumers, nowMs)
}

/**
 * Writes the event of a revocation just written (`revoked`: the grants it ended, the run of one
 * address and SKU, oldest first), and its outbox rows, in the caller's transaction.
 * @returns the event, or undefined when it revoked nothing or no consumer hears of revocations
 */
export async function writeRevokedEvent (sql: Sql, revoked: readonly Grant[], held: Entitlement | undefined, reason: string, consumers: readonly string[], nowMs: number): Promise<EntitlementEvent | undefined> {
  const latest = revoked.at(-1)
  if (latest === undefined || held === undefined) return undefined
  const facts = { address: latest.address, sku: held.sku, grantedAtMs: held.grantedAtMs, expiresAtMs: held.expiresAtMs, invoiceId: held.invoiceId, reason }
  return writeEvent(sql, 'entitlementRevoked', latest.id, facts, consumers, nowMs)
}

async function writeEvent (sql: Sql, type: EntitlementEventType, grantId: number, facts: EntitlementFacts, consumers: readonly string[], nowMs: number): Promise<EntitlementEvent | undefined> {
  if (consumers.length === 0) return undefined
  const { rows } = await sql.query<EntitlementEventRow>(
    `INSERT INTO outbox_events (grant_id, type, payload, created_at_ms) VALUES ($1, $2, $3, $4)
     RETURNING id, grant_id, type, payload, created_at_ms`,
    [grantId, type, facts, nowMs]
  )
  const event = entitlementEventOfRow(rows[0] as EntitlementEventRow)
  for (const consumer of consumers) await sql.query('INSERT INTO outbox (event_id, consumer) VALUES ($1, $2)', [event.id, consumer])
  return event
}
