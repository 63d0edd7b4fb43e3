/**
 * What a payout or a refund must be before anything is signed (docs/payouts.md, "Rules"): the
 * receiver an address of the service's network, the amount whole satoshi from the dust limit up,
 * the memo what one OP_RETURN output relays, the idempotency key short and plain; then the
 * operator's limits: one payout's most, the UTC day's most (counted under the wallet's lock, in
 * payout-store.ts), and the receivers allowed. A refund goes to the payer the chain names, so the
 * allowlist does not apply to it; the limits do.
 */
import { isPocketnetAddress, addressRule, type PocketnetNetwork } from 'pocketnet-client'
import { PayoutError } from './payout-errors.js'
import type { PayoutTerms, RefundRoom } from './payout-store.js'

export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN)
/** The node relays one OP_RETURN output of up to 83 script bytes: 80 bytes of data after the opcode and its push. */
export const MAX_MEMO_BYTES = 80
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

export interface PayoutLimits {
  network: PocketnetNetwork
  /** The smallest output the node relays. */
  dustSat: number
  /** One payout's most; 0: no limit. */
  maxSat: number
  /** The UTC day's most, payouts and refunds together; 0: no limit. */
  dailyMaxSat: number
  /** The only receivers of `payouts.send` (not of refunds); empty: any. */
  allowlist: ReadonlySet<string>
}

export function checkAddress (to: unknown, limits: PayoutLimits): string {
  if (!isPocketnetAddress(to, limits.network)) throw new PayoutError('PAYOUT_ERR_ADDRESS', `to must be ${addressRule(limits.network)}`)
  return to
}

export function checkAmount (amountSat: unknown, limits: PayoutLimits): number {
  if (typeof amountSat !== 'number' || !Number.isSafeInteger(amountSat) || amountSat < limits.dustSat) {
    throw new PayoutError('PAYOUT_ERR_AMOUNT', `amountSat must be a whole number of satoshi of at least ${limits.dustSat} (the dust limit), got ${JSON.stringify(amountSat)}`)
  }
  if (limits.maxSat > 0 && amountSat > limits.maxSat) throw new PayoutError('PAYOUT_ERR_OVER_LIMIT', `amountSat ${amountSat} is above PAYOUT_MAX_SAT (${limits.maxSat})`)
  return amountSat
}

export function checkMemo (memo: unknown): string | undefined {
  if (memo === undefined) return undefined
  if (typeof memo !== 'string' || memo === '' || CONTROL.test(memo) || Buffer.byteLength(memo, 'utf8') > MAX_MEMO_BYTES) {
    throw new PayoutError('PAYOUT_ERR_MEMO', `memo must be 1 to ${MAX_MEMO_BYTES} bytes of UTF-8 text without control characters`)
  }
  return memo
}

export function checkIdempotencyKey (key: unknown): string {
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) throw new PayoutError('PAYOUT_ERR_IDEMPOTENCY_KEY', 'idempotencyKey must be 1 to 128 characters, each a letter, a digit, ".", "_", ":" or "-"')
  return key
}

/** The allowlist, for `payouts.send` only. */
export function checkAllowed (to: string, limits: PayoutLimits): void {
  if (limits.allowlist.size > 0 && !limits.allowlist.has(to)) throw new PayoutError('PAYOUT_ERR_NOT_ALLOWED', `${to} is not in PAYOUT_ALLOWLIST`)
}

/**
 * The checks made under the locks: the day's total and, for a refund, what is left of the
 * payment (`amountSat` undefined: all of it). Answers the terms with the refund's amount set.
 */
export function admit (terms: PayoutTerms, paidTodaySat: number, refund: RefundRoom | undefined, limits: PayoutLimits): PayoutTerms {
  let admitted = terms
  if (terms.kind === 'refund') {
    if (refund === undefined || refund.paidSat === 0) throw new PayoutError('REFUND_ERR_NOT_CONFIRMED', `invoice ${terms.invoiceId as string} is not confirmed`)
    const left = refund.paidSat - refund.refundedSat
    if (left <= 0) throw new PayoutError('REFUND_ERR_ALREADY_REFUNDED', `invoice ${terms.invoiceId as string} was refunded in full (${refund.refundedSat} satoshi)`)
    // 0 asks for the rest of the payment.
    const amountSat = terms.amountSat === 0 ? left : terms.amountSat
    if (amountSat > left) throw new PayoutError('REFUND_ERR_TOO_MUCH', `amountSat ${amountSat} is more than the ${left} satoshi left to refund of the ${refund.paidSat} paid`)
    checkAmount(amountSat, limits)
    admitted = { ...terms, amountSat }
  }
  if (limits.dailyMaxSat > 0 && paidTodaySat + admitted.amountSat > limits.dailyMaxSat) {
    throw new PayoutError('PAYOUT_ERR_DAILY_LIMIT', `the payouts of this UTC day would reach ${paidTodaySat + admitted.amountSat} satoshi, above PAYOUT_DAILY_MAX_SAT (${limits.dailyMaxSat})`)
  }
  return admitted
}
