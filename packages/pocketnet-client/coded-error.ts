/**
 * The shape of the client's refusals outside RPC calls (signatures, payments, webhooks), and of
 * the service's own (invoices, the database): a stable `code` from a table of codes and their
 * meanings, to match on, and a message in words that says what was seen. Each kind of refusal is
 * a subclass with its own table and name.
 */
export class CodedError<Code extends string> extends Error {
  readonly code: Code

  constructor (code: Code, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}
