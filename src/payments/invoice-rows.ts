/** Rows of the invoices table and of the invoices' events (`outbox_events`), read into the types callers see. */
import { safeInteger } from '../db/database.js'
import type { Grant } from '../entitlements/entitlement.js'
import type { Invoice, InvoiceEvent, InvoiceEventType, InvoiceState } from './invoice.js'
import type { InvoiceStanding } from './invoice-decision.js'

/** The columns every invoice query selects, in the names {@link invoiceOfRow} reads. */
export const INVOICE_COLUMNS = `id, amount_sat, receiver, memo, metadata, state, confirmations_required, expires_at_ms,
  created_at_ms, updated_at_ms, version, settling_txid, confirmations, underpaid_sat, overpaid_sat, paid_late_sat,
  grant_sku, grant_to, grant_duration_s`

export interface InvoiceRow {
  id: string
  amount_sat: unknown
  receiver: string
  memo: string
  metadata: Record<string, unknown>
  state: InvoiceState
  confirmations_required: number
  expires_at_ms: unknown
  created_at_ms: unknown
  updated_at_ms: unknown
  version: number
  settling_txid: string | null
  confirmations: number
  underpaid_sat: unknown
  overpaid_sat: unknown
  paid_late_sat: unknown
  grant_sku: string | null
  grant_to: string | null
  grant_duration_s: unknown
}

export function invoiceOfRow (row: InvoiceRow): Invoice {
  const underpaidSat = safeInteger(row.underpaid_sat, 'underpaid_sat')
  const overpaidSat = safeInteger(row.overpaid_sat, 'overpaid_sat')
  const paidLateSat = safeInteger(row.paid_late_sat, 'paid_late_sat')
  return {
    id: row.id,
    amountSat: safeInteger(row.amount_sat, 'amount_sat'),
    receiver: row.receiver,
    memo: row.memo,
    metadata: row.metadata,
    state: row.state,
    confirmationsRequired: row.confirmations_required,
    expiresAtMs: safeInteger(row.expires_at_ms, 'expires_at_ms'),
    createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms'),
    updatedAtMs: safeInteger(row.updated_at_ms, 'updated_at_ms'),
    version: row.version,
    txid: row.settling_txid,
    confirmations: row.confirmations,
    underpaid: underpaidSat > 0,
    underpaidSat,
    overpaid: overpaidSat > 0,
    overpaidSat,
    paidLate: paidLateSat > 0,
    paidLateSat,
    grant: row.grant_sku === null || row.grant_to === null
      ? null
      : { sku: row.grant_sku, to: row.grant_to, ...(row.grant_duration_s === null ? {} : { durationS: safeInteger(row.grant_duration_s, 'grant_duration_s') }) },
  }
}

/** The invoice's current standing, as stored. */
export function standingOf (invoice: Invoice): InvoiceStanding {
  return {
    state: invoice.state,
    settlingTxid: invoice.txid,
    confirmations: invoice.confirmations,
    underpaidSat: invoice.underpaidSat,
    overpaidSat: invoice.overpaidSat,
    paidLateSat: invoice.paidLateSat,
  }
}

export interface EventRow {
  id: unknown
  invoice_id: string
  sequence: number
  type: InvoiceEventType
  payload: { previousState: InvoiceState, invoice: Invoice, grant?: Grant }
  created_at_ms: unknown
}

export function eventOfRow (row: EventRow): InvoiceEvent {
  return {
    id: safeInteger(row.id, 'id'),
    invoiceId: row.invoice_id,
    sequence: row.sequence,
    type: row.type,
    idempotencyKey: `${row.invoice_id}:${row.sequence}`,
    previousState: row.payload.previousState,
    // Events written before grants existed hold invoices without the field.
    invoice: row.payload.invoice?.grant === undefined && row.payload.invoice !== undefined ? { ...row.payload.invoice, grant: null } : row.payload.invoice,
    ...(row.payload.grant === undefined ? {} : { grant: row.payload.grant }),
    createdAtMs: safeInteger(row.created_at_ms, 'created_at_ms'),
  }
}
