/** Schemas of PKOIN payments (/api/payments/...): docs/payments.md. */
import { Type } from 'typebox'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

const { 400: badRequest, 404: notFound, 429: tooManyRequests, 500: failed, 503: unavailable } = ErrorResponses

const InvoiceId = Type.String({ pattern: '^inv_[A-Za-z0-9_-]{22}$', description: 'An invoice id: whoever has it may read the invoice' })

/** What an invoice grants once confirmed (docs/entitlements.md). */
const InvoiceGrant = Type.Object({
  sku: Type.String(),
  to: Type.String({ description: 'The address that gets it' }),
  durationS: Type.Optional(Type.Integer({ description: 'Seconds from the current end while held, else from the confirmation; absent: for good' })),
}, { description: 'With a grant: what the invoice grants once confirmed, in the transaction that confirms it' })

/** An invoice as every route that answers one shows it (the catalogue's too). */
export const Invoice = Type.Object({
  id: Type.String(),
  amount: Type.Integer({ description: 'Satoshi (1 PKOIN = 100,000,000)' }),
  receiver: Type.String(),
  memo: Type.String({ description: 'The OP_RETURN text that ties a payment to this invoice' }),
  state: Type.String({ enum: ['pending', 'seen', 'confirmed', 'expired'] }),
  txid: Type.Union([Type.String(), Type.Null()]),
  confirmations: Type.Integer(),
  confirmationsRequired: Type.Integer(),
  expiresAt: Type.String({ format: 'date-time' }),
  underpaid: Type.Boolean(),
  underpaidAmount: Type.Integer(),
  overpaid: Type.Boolean(),
  overpaidAmount: Type.Integer(),
  paidLate: Type.Boolean(),
  paidLateAmount: Type.Integer(),
  metadata: Type.Object({}, { additionalProperties: true }),
  hostRequest: Type.Object({
    recievers: Type.Array(Type.Object({ address: Type.String(), amount: Type.Number({ description: 'PKOIN, as sdk.payment takes it' }) })),
    feemode: Type.Literal('exclude'),
    message: Type.String(),
  }, { description: 'Pass it to `sdk.payment(...)` unchanged (the host spells it `recievers`)' }),
  hostCheckout: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'With a checkout: the object for `sdk.ext(...)`, unchanged (its key order is part of its hash; the host pays it with the invoice\'s memo, `pay_<hash>`)' })),
  grant: Type.Optional(InvoiceGrant),
})

/** An invoice as answered, for the examples. */
export const INVOICE_EXAMPLE = {
  id: 'inv_q3vX0dPz6Qk1b8hNw2YtLr',
  amount: 150_000_000,
  receiver: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX',
  memo: 'pk_8hNw2YtLr5sJm9cF',
  state: 'pending',
  txid: null,
  confirmations: 0,
  confirmationsRequired: 6,
  expiresAt: '2026-11-25T11:00:00.000Z',
  underpaid: false,
  underpaidAmount: 0,
  overpaid: false,
  overpaidAmount: 0,
  paidLate: false,
  paidLateAmount: 0,
  metadata: {},
  hostRequest: { recievers: [{ address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', amount: 1.5 }], feemode: 'exclude', message: 'pk_8hNw2YtLr5sJm9cF' },
}

export const TipSchema = {
  tags: ['payments'],
  summary: 'A tip: an invoice of the amount the payer chooses, within the app\'s bounds',
  body: Type.Object({
    amount: Type.Integer({ description: 'Satoshi, within PAYMENT_TIP_MIN_SAT and PAYMENT_TIP_MAX_SAT' }),
    checkout: Type.Optional(Type.Boolean({ description: 'Also the host\'s checkout (`hostCheckout` for `sdk.ext`), which calls POST /api/payments/callback once paid' })),
  }, { additionalProperties: false }),
  response: {
    200: SuccessEnvelope(Invoice, { message: 'Invoice created', data: INVOICE_EXAMPLE }),
    400: badRequest,
    429: tooManyRequests,
    503: unavailable,
  },
}

export const InvoiceSchema = {
  tags: ['payments'],
  summary: 'An invoice and its state, as the chain decides it',
  params: Type.Object({ id: InvoiceId }),
  response: {
    200: SuccessEnvelope(Invoice, { message: 'Invoice retrieved successfully', data: INVOICE_EXAMPLE }),
    400: badRequest,
    404: notFound,
    429: tooManyRequests,
  },
}

export const InvoiceTransactionSchema = {
  tags: ['payments'],
  summary: 'Report the txid the host gave: the server checks it on chain at once',
  description: 'A hint, never proof: the node\'s answer decides. `refused` says why a transaction does not count for this invoice: UNKNOWN_TRANSACTION, MEMO_MISMATCH, NOT_PAID_TO_RECEIVER or TXID_TAKEN (it settled another invoice).',
  params: Type.Object({ id: InvoiceId }),
  body: Type.Object({ txid: Type.String({ pattern: '^[0-9a-f]{64}$', description: '64 lowercase hex digits' }) }, { additionalProperties: false }),
  response: {
    200: SuccessEnvelope(Type.Object({ invoice: Invoice, refused: Type.Optional(Type.String()) }), { message: 'Transaction checked', data: { invoice: { ...INVOICE_EXAMPLE, state: 'seen', txid: 'ab'.repeat(32), confirmations: 1 } } }),
    400: badRequest,
    404: notFound,
    429: tooManyRequests,
    500: failed,
  },
}

export const CallbackSchema = {
  tags: ['payments'],
  summary: 'The host checkout\'s callback (`c_url`) once the user paid: checked on chain, never believed',
  description: 'The host POSTs `{tx, invoice, account?, email?, phone?, shipment?}` (its own fields beside the payload the checkout was built with). The txid is read on chain for the invoice named; nothing the body says settles anything.',
  body: Type.Object({
    tx: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    invoice: InvoiceId,
  }, { additionalProperties: true }),
  response: {
    200: SuccessEnvelope(Type.Object({ invoice: Invoice, refused: Type.Optional(Type.String()) }), { message: 'Callback checked', data: { invoice: { ...INVOICE_EXAMPLE, state: 'seen', txid: 'ab'.repeat(32), confirmations: 1 } } }),
    400: badRequest,
    404: notFound,
    429: tooManyRequests,
    500: failed,
  },
}
