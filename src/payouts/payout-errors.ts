/**
 * What payouts refuse: a stable code for server code to match on, and the HTTP status that answers
 * it when it reaches the error handler (`{message, error, code}`). Nothing was signed or sent when
 * one is thrown.
 */
import { HttpError } from '../http/errors.js'

export const PAYOUT_ERROR_CODES = {
  PAYOUT_ERR_ADDRESS: '`to` is not an address of the service\'s network.',
  PAYOUT_ERR_AMOUNT: '`amountSat` is not a whole number of satoshi from the dust limit up.',
  PAYOUT_ERR_MEMO: '`memo` is longer than the node relays in one OP_RETURN output (80 bytes of UTF-8), or holds control characters.',
  PAYOUT_ERR_IDEMPOTENCY_KEY: '`idempotencyKey` is not 1 to 128 characters, each a letter, a digit, `.`, `_`, `:` or `-`.',
  PAYOUT_ERR_KEY_REUSED: 'The idempotency key names an earlier payout with other terms (receiver, amount or memo): a key names one payout, ever.',
  PAYOUT_ERR_OVER_LIMIT: 'The payout is above `PAYOUT_MAX_SAT`.',
  PAYOUT_ERR_DAILY_LIMIT: 'The payout would take the wallet\'s payouts of this UTC day above `PAYOUT_DAILY_MAX_SAT`.',
  PAYOUT_ERR_NOT_ALLOWED: 'The receiver is not in `PAYOUT_ALLOWLIST`.',
  PAYOUT_ERR_INSUFFICIENT_FUNDS: 'The wallet\'s confirmed outputs that no other payout holds do not cover the amount and the fee.',
  PAYOUT_ERR_NOT_FOUND: 'No payout has this id.',
  REFUND_ERR_INVOICE_NOT_FOUND: 'No invoice has this id.',
  REFUND_ERR_NOT_CONFIRMED: 'The invoice is not confirmed: only a confirmed payment is refunded.',
  REFUND_ERR_PAYER_UNKNOWN: 'The payment\'s inputs do not name one payer address (or its transaction could not be read): it cannot be refunded automatically.',
  REFUND_ERR_ALREADY_REFUNDED: 'The invoice\'s payment was refunded in full already.',
  REFUND_ERR_TOO_MUCH: '`amountSat` is more than what is left to refund of the payment.',
} as const

export type PayoutErrorCode = keyof typeof PAYOUT_ERROR_CODES

const STATUS: Record<PayoutErrorCode, [number, string]> = {
  PAYOUT_ERR_ADDRESS: [400, 'Invalid payout'],
  PAYOUT_ERR_AMOUNT: [400, 'Invalid payout'],
  PAYOUT_ERR_MEMO: [400, 'Invalid payout'],
  PAYOUT_ERR_IDEMPOTENCY_KEY: [400, 'Invalid payout'],
  PAYOUT_ERR_KEY_REUSED: [409, 'Idempotency key reused'],
  PAYOUT_ERR_OVER_LIMIT: [422, 'Payout refused'],
  PAYOUT_ERR_DAILY_LIMIT: [422, 'Payout refused'],
  PAYOUT_ERR_NOT_ALLOWED: [422, 'Payout refused'],
  PAYOUT_ERR_INSUFFICIENT_FUNDS: [422, 'Payout refused'],
  PAYOUT_ERR_NOT_FOUND: [404, 'Payout not found'],
  REFUND_ERR_INVOICE_NOT_FOUND: [404, 'Invoice not found'],
  REFUND_ERR_NOT_CONFIRMED: [409, 'Refund refused'],
  REFUND_ERR_PAYER_UNKNOWN: [422, 'Refund refused'],
  REFUND_ERR_ALREADY_REFUNDED: [409, 'Refund refused'],
  REFUND_ERR_TOO_MUCH: [422, 'Refund refused'],
}

/** A refusal, with its HTTP answer built in. Match on `err.code`. */
export class PayoutError extends HttpError {
  override readonly code: PayoutErrorCode

  constructor (code: PayoutErrorCode, detail: string) {
    const [status, title] = STATUS[code]
    super(status, title, detail)
    this.name = 'PayoutError'
    this.code = code
  }
}
