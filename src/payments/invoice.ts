/**
 * The invoice as the payments code and its callers see it: amounts in satoshi (safe integers),
 * times in milliseconds of the service's clock. The states and what moves an invoice between
 * them are in docs/payments.md, "States".
 */
import type { Grant, GrantTerms } from '../entitlements/entitlement.js'

/**
 * - `pending`: waiting for a payment in a block (one may be known in the mempool).
 * - `seen`: paid in full, on time, in a block with fewer confirmations than required.
 * - `confirmed`: paid and confirmed: final.
 * - `expired`: no payment in full arrived before `expiresAtMs`.
 */
export type InvoiceState = 'pending' | 'seen' | 'confirmed' | 'expired'

export const INVOICE_STATES: readonly InvoiceState[] = ['pending', 'seen', 'confirmed', 'expired']

export interface Invoice {
  /** Unguessable: whoever has it may read the invoice. */
  id: string
  amountSat: number
  receiver: string
  /** The OP_RETURN text that ties a payment to this invoice; unique among all invoices. */
  memo: string
  /** The app's own data (an order id …), returned as given. */
  metadata: Record<string, unknown>
  state: InvoiceState
  confirmationsRequired: number
  expiresAtMs: number
  createdAtMs: number
  updatedAtMs: number
  /** How many transitions it went through: the sequence of its latest event. */
  version: number
  /** The payment that settles it (`seen`, `confirmed`), or null. */
  txid: string | null
  /** That payment's confirmations, 0 without one. */
  confirmations: number
  /** Payments on time, with its memo, each short of the amount: they do not settle it. */
  underpaid: boolean
  underpaidSat: number
  /** More than the amount arrived: the settling payment's excess, plus any further payment in full. */
  overpaid: boolean
  overpaidSat: number
  /** Payments with its memo first seen at or after its expiry: recorded, never settling it. */
  paidLate: boolean
  paidLateSat: number
  /** What it grants once confirmed, in the transaction that confirms it (docs/entitlements.md); null: nothing. */
  grant: GrantTerms | null
}

/** What the app is told about: a change of state, or money arriving that does not settle the invoice as asked. */
export type InvoiceEventType = InvoiceState | 'underpaid' | 'overpaid' | 'paidLate'

export const INVOICE_EVENT_TYPES: readonly InvoiceEventType[] = [...INVOICE_STATES, 'underpaid', 'overpaid', 'paidLate']

export interface InvoiceEvent {
  /** Increasing in the order events were written, across invoices. */
  id: number
  invoiceId: string
  /** 1, 2, 3 … per invoice, in the order of its transitions. */
  sequence: number
  type: InvoiceEventType
  /**
   * `<invoiceId>:<sequence>`: the same for every delivery of this event. A `confirmed` event
   * happens at most once per invoice (a database constraint), so for it the invoice id alone is
   * enough.
   */
  idempotencyKey: string
  /** The state before the transition that wrote this event. */
  previousState: InvoiceState
  /** The invoice just after it. */
  invoice: Invoice
  /** On the `confirmed` event of an invoice that grants: the grant written with the confirmation. */
  grant?: Grant
  createdAtMs: number
}
