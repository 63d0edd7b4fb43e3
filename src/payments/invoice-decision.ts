/**
 * Where an invoice stands, decided from its payments as the chain last showed them and from the
 * clock: pure, so the same facts always give the same answer, and recording an observation twice
 * changes nothing the second time. docs/payments.md, "States", says why each rule is there.
 */
import type { InvoiceEventType, InvoiceState } from './invoice.js'

/** Where a payment was when last checked: waiting in the mempool, in a block, or gone from both. */
export type PaymentState = 'mempool' | 'in_block' | 'dropped'

/** One payment recorded for the invoice (memo matching, something paid to its receiver). */
export interface PaymentFacts {
  txid: string
  receivedSat: number
  state: PaymentState
  confirmations: number
  /** When the service first saw it, in or out of a block. */
  firstSeenAtMs: number
}

export interface InvoiceTerms {
  state: InvoiceState
  amountSat: number
  confirmationsRequired: number
  expiresAtMs: number
  /** The payment that settled it, kept once it is confirmed. */
  settlingTxid: string | null
}

export interface InvoiceStanding {
  state: InvoiceState
  settlingTxid: string | null
  confirmations: number
  underpaidSat: number
  overpaidSat: number
  paidLateSat: number
}

/** Seen before the invoice expired: a payment first seen at or after `expiresAtMs` is late. */
function onTime (payment: PaymentFacts, terms: InvoiceTerms): boolean {
  return payment.firstSeenAtMs < terms.expiresAtMs
}

/** The payment that settles: in a block before one that is not, then the deepest, then the first seen. */
function settlingPayment (candidates: PaymentFacts[]): PaymentFacts | undefined {
  return [...candidates].sort((a, b) =>
    Number(b.state === 'in_block') - Number(a.state === 'in_block') ||
    b.confirmations - a.confirmations ||
    a.firstSeenAtMs - b.firstSeenAtMs ||
    (a.txid < b.txid ? -1 : 1))[0]
}

/**
 * Where the invoice stands now.
 * - It settles with a payment in full (memo matching: the only payments recorded), first seen
 *   before expiry and not dropped: `seen` once that payment is in a block, `confirmed` once the
 *   block has the confirmations required. Confirmed is final.
 * - Without one, it is `pending` until `expiresAtMs`, then `expired`. With one still in the
 *   mempool, it stays `pending`, even past expiry: the payment was made in time.
 * - A re-org that takes the settling payment out of its block moves the invoice back (to
 *   `pending`, or `expired` when the payment is gone and the time is past).
 * - Late payments, short ones and extra ones are summed into their amounts, never settling.
 */
export function decideInvoice (terms: InvoiceTerms, payments: readonly PaymentFacts[], nowMs: number): InvoiceStanding {
  const live = payments.filter(payment => payment.state !== 'dropped')
  const timely = live.filter(payment => onTime(payment, terms))
  const full = timely.filter(payment => payment.receivedSat >= terms.amountSat)
  const settling = terms.state === 'confirmed'
    ? payments.find(payment => payment.txid === terms.settlingTxid)
    : settlingPayment(full)
  let state: InvoiceState
  if (terms.state === 'confirmed') state = 'confirmed'
  else if (settling?.state === 'in_block') state = settling.confirmations >= terms.confirmationsRequired ? 'confirmed' : 'seen'
  else if (settling !== undefined) state = 'pending'
  else state = nowMs >= terms.expiresAtMs ? 'expired' : 'pending'
  const sum = (list: PaymentFacts[]): number => list.reduce((total, payment) => total + payment.receivedSat, 0)
  const others = full.filter(payment => payment !== settling)
  return {
    state,
    // A payment in the mempool settles nothing yet: the invoice names it once it is in a block.
    settlingTxid: settling !== undefined && (state === 'seen' || state === 'confirmed') ? settling.txid : null,
    confirmations: state === 'seen' || state === 'confirmed' ? (settling?.confirmations ?? 0) : 0,
    underpaidSat: sum(timely.filter(payment => payment.receivedSat < terms.amountSat)),
    overpaidSat: (settling !== undefined && state !== 'pending' ? settling.receivedSat - terms.amountSat : 0) + sum(others),
    paidLateSat: sum(live.filter(payment => !onTime(payment, terms))),
  }
}

/**
 * The events one change of standing makes, in order: the new state when it changed, then each
 * kind of money whose amount grew (a second short payment is news; a re-org that takes one away
 * is not a new event, the invoice just says less).
 */
export function eventsBetween (before: InvoiceStanding, after: InvoiceStanding): InvoiceEventType[] {
  const events: InvoiceEventType[] = []
  if (after.state !== before.state) events.push(after.state)
  if (after.underpaidSat > before.underpaidSat) events.push('underpaid')
  if (after.overpaidSat > before.overpaidSat) events.push('overpaid')
  if (after.paidLateSat > before.paidLateSat) events.push('paidLate')
  return events
}

/** True when the two standings differ in anything the invoice row holds. */
export function standingChanged (before: InvoiceStanding, after: InvoiceStanding): boolean {
  return before.state !== after.state ||
    before.settlingTxid !== after.settlingTxid ||
    before.confirmations !== after.confirmations ||
    before.underpaidSat !== after.underpaidSat ||
    before.overpaidSat !== after.overpaidSat ||
    before.paidLateSat !== after.paidLateSat
}
