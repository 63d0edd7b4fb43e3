/** What the invoice store refuses. Match on `err.code`. */

export const INVOICE_ERROR_CODES = {
  INVOICE_ERR_INVALID: 'The invoice asked for is not valid: an amount, receiver, memo, lifetime, confirmation count or metadata out of its rules.',
  INVOICE_ERR_MEMO_TAKEN: 'Another invoice already has this memo: a memo ties a payment to one invoice, so it is never shared.',
  INVOICE_ERR_NOT_FOUND: 'No invoice has this id.',
  INVOICE_ERR_OBSERVATION: 'The observation is not usable: its txid is malformed, or differs from the transaction\'s, or the tip is not a block height.',
} as const

export type InvoiceErrorCode = keyof typeof INVOICE_ERROR_CODES

export class InvoiceError extends Error {
  readonly code: InvoiceErrorCode

  constructor (code: InvoiceErrorCode, message: string) {
    super(message)
    this.name = 'InvoiceError'
    this.code = code
  }
}
