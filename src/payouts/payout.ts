/**
 * A payout: money that leaves the app's wallet, to an address (`payout`) or back to an invoice's
 * payer (`refund`). Its states, in the order a payout meets them (docs/payouts.md, "States"):
 *
 * - `pending`: signed and stored, with the outputs it spends held for it; not yet accepted by a
 *   node. Every broadcast sends the stored bytes, so its txid never changes.
 * - `broadcast`: a node accepted it (or said it had it already). Checked on each block until it
 *   is deep enough; a node that forgot it (its mempool dropped it, a re-org put it back) is sent
 *   the same bytes again.
 * - `confirmed`: in a block with `PAYOUT_CONFIRMATIONS` blocks on it, as enough nodes agree. Final.
 * - `failed`: it can never confirm (an output it spends was spent by another transaction that is
 *   buried, or the node refused it for good before any node accepted it). Final; its outputs are
 *   given back. A new payout needs a new idempotency key.
 */

export const PAYOUT_STATES = ['pending', 'broadcast', 'confirmed', 'failed'] as const
export type PayoutState = typeof PAYOUT_STATES[number]

export type PayoutKind = 'payout' | 'refund'

/** Who asked for a payout, or moved it: the app's code, an operator (the admin routes), the service itself. */
export type PayoutActor = 'app' | 'admin' | 'service'

/** Why a payout failed: stable codes. */
export const FAILURE_REASONS = {
  INPUTS_SPENT: 'an output it spends was spent by another transaction, buried as deep as a confirmation',
  REJECTED: 'the node refused the transaction for good before any node had accepted it',
} as const
export type FailureReason = keyof typeof FAILURE_REASONS

export interface Payout {
  id: string
  idempotencyKey: string
  kind: PayoutKind
  invoiceId: string | undefined
  to: string
  amountSat: number
  feeSat: number
  memo: string | undefined
  state: PayoutState
  reason: FailureReason | undefined
  txid: string
  /** The signed transaction, hex: what every broadcast sends. */
  rawTx: string
  height: number | undefined
  blockHash: string | undefined
  confirmations: number
  broadcasts: number
  requestedBy: Exclude<PayoutActor, 'service'>
  createdAtMs: number
  updatedAtMs: number
  broadcastAtMs: number | undefined
  confirmedAtMs: number | undefined
  /** The wallet's outputs it spends, `txid:vout`; none once failed (given back). */
  inputs: string[]
}

/** What the API shows of a payout (the transaction's bytes are the node's business). */
export interface PayoutView {
  id: string
  kind: PayoutKind
  invoiceId?: string
  idempotencyKey: string
  to: string
  amountSat: number
  feeSat: number
  memo?: string
  state: PayoutState
  reason?: FailureReason
  txid: string
  height?: number
  blockHash?: string
  confirmations: number
  createdAt: string
  updatedAt: string
  broadcastAt?: string
  confirmedAt?: string
}

const iso = (ms: number): string => new Date(ms).toISOString()

export function payoutView (payout: Payout): PayoutView {
  return {
    id: payout.id,
    kind: payout.kind,
    ...(payout.invoiceId === undefined ? {} : { invoiceId: payout.invoiceId }),
    idempotencyKey: payout.idempotencyKey,
    to: payout.to,
    amountSat: payout.amountSat,
    feeSat: payout.feeSat,
    ...(payout.memo === undefined ? {} : { memo: payout.memo }),
    state: payout.state,
    ...(payout.reason === undefined ? {} : { reason: payout.reason }),
    txid: payout.txid,
    ...(payout.height === undefined ? {} : { height: payout.height, blockHash: payout.blockHash as string }),
    confirmations: payout.confirmations,
    createdAt: iso(payout.createdAtMs),
    updatedAt: iso(payout.updatedAtMs),
    ...(payout.broadcastAtMs === undefined ? {} : { broadcastAt: iso(payout.broadcastAtMs) }),
    ...(payout.confirmedAtMs === undefined ? {} : { confirmedAt: iso(payout.confirmedAtMs) }),
  }
}
