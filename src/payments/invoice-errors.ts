/** What the invoice store refuses. Match on `err.code`. */
import { CodedError } from 'pocketnet-client'

export const INVOICE_ERROR_CODES = {
  INVOICE_ERR_INVALID: 'The invoice asked for is not valid: an amount, receiver, memo, lifetime, confirmation count or metadata out of its rules.',
  INVOICE_ERR_MEMO_TAKEN: 'Another invoice already has this memo: a memo ties a payment to one invoice, so it is never shared.',
  INVOICE_ERR_NOT_FOUND: 'No invoice has this id.',
  INVOICE_ERR_OBSERVATION: 'The observation is not usable: its txid is malformed, or differs from the transaction\'s, or the tip is not a block height.',
} as const

export type InvoiceErrorCode = keyof typeof INVOICE_ERROR_CODES

export class InvoiceError extends CodedError<InvoiceErrorCode> {
  override name = 'InvoiceError'
}
