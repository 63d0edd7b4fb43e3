/**
 * What the payment proof refuses. Match on `err.code`: stable strings, as the rest of the client's
 * errors. Messages quote what was refused (an amount, a field), never a node's URL.
 */
import { CodedError } from '../coded-error.js'

export const PAYMENT_ERROR_CODES = {
  PAYMENT_ERR_AMOUNT: 'An amount is not a whole number of satoshi in range: negative, fractional satoshi, not a number, or too large to be exact.',
  PAYMENT_ERR_MALFORMED_TRANSACTION: 'A getrawtransaction answer does not have the fields and types of a Pocketnet transaction.',
  PAYMENT_ERR_EXPECTATION: 'What a payment is checked against is not usable: a receiver, a positive amount in satoshi and a memo are needed.',
  PAYMENT_ERR_LINK: 'A payment link holds something the host cannot carry (a character its hex encoding loses, markup it strips) or lacks what it needs.',
} as const

export type PaymentErrorCode = keyof typeof PAYMENT_ERROR_CODES

/** A value refused by the payment helpers; `code` says which rule, the message says what was seen. */
export class PaymentError extends CodedError<PaymentErrorCode> {
  override name = 'PaymentError'
}
