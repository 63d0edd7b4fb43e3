/**
 * Invoice ids and memos from `node:crypto`'s random bytes. An id is a capability (whoever has it
 * may read the invoice), so it has 128 random bits; a memo is public on chain and needs only to
 * be unique (96 bits, and the database refuses a repeat).
 */
import { randomBytes } from 'node:crypto'

/** `inv_` and 22 base64url characters. */
export function newInvoiceId (): string {
  return `inv_${randomBytes(16).toString('base64url')}`
}

/** `pk_` and 16 base64url characters: ASCII, well under the 80 bytes an OP_RETURN holds. */
export function newInvoiceMemo (): string {
  return `pk_${randomBytes(12).toString('base64url')}`
}
