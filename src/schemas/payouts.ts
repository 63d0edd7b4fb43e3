/**
 * Schemas of the operators' payout routes (docs/payouts.md): POST /api/admin/payouts,
 * GET /api/admin/payouts/{id}, POST /api/admin/invoices/{id}/refund. Every one needs
 * `Authorization: Bearer <ADMIN_TOKEN>`.
 */
import { Type } from 'typebox'
import { ADMIN_ERROR_CODES } from '../auth/admin-token.js'
import { FAILURE_REASONS, PAYOUT_STATES } from '../payouts/payout.js'
import { PAYOUT_ERROR_CODES } from '../payouts/payout-errors.js'
import { IDEMPOTENCY_KEY_PATTERN, MAX_MEMO_BYTES } from '../payouts/payout-rules.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'
import { ADMIN_SCHEME } from './notifications.js'

const { 429: tooManyRequests, 503: unavailable } = ErrorResponses

const ADDRESS = 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX'
const TXID = '9a1d5c3f0e6b4a7d8c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c'
const EXAMPLE = {
  id: 'po_3kQ9Zt0mVf8pXc2LwYb7Rg',
  kind: 'payout',
  idempotencyKey: 'prize-2026-11-29-alice',
  to: ADDRESS,
  amountSat: 150_000_000,
  feeSat: 22_600,
  memo: 'Weekly prize',
  state: 'broadcast',
  txid: TXID,
  confirmations: 0,
  createdAt: '2026-11-29T10:00:00.000Z',
  updatedAt: '2026-11-29T10:00:00.412Z',
  broadcastAt: '2026-11-29T10:00:00.412Z',
}

const PayoutView = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('payout'), Type.Literal('refund')]),
  invoiceId: Type.Optional(Type.String({ description: 'The invoice a refund returns the payment of' })),
  idempotencyKey: Type.String(),
  to: Type.String({ description: 'The receiver: for a refund, the address the payment\'s first input spent from' }),
  amountSat: Type.Integer({ description: 'What the receiver gets, in satoshi: the fee is paid by the wallet on top' }),
  feeSat: Type.Integer(),
  memo: Type.Optional(Type.String({ description: 'Written in one OP_RETURN output of the transaction' })),
  state: Type.String({ enum: [...PAYOUT_STATES], description: 'pending (signed and stored, no node took it yet), broadcast (a node took it), confirmed (final), failed (final, with a reason)' }),
  reason: Type.Optional(Type.String({ enum: Object.keys(FAILURE_REASONS), description: 'Why it failed' })),
  txid: Type.String({ description: 'Fixed at signing: every broadcast sends the same transaction' }),
  height: Type.Optional(Type.Integer()),
  blockHash: Type.Optional(Type.String()),
  confirmations: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  broadcastAt: Type.Optional(Type.String({ format: 'date-time' })),
  confirmedAt: Type.Optional(Type.String({ format: 'date-time' })),
})

const refused = (description: string, example: { message: string, error: string, code: string }) => Type.Object({
  message: Type.String(),
  error: Type.String(),
  code: Type.Optional(Type.String({ enum: Object.keys(PAYOUT_ERROR_CODES), description: 'Stable reason: docs/payouts.md lists them all (absent when the body broke its schema)' })),
}, { description, examples: [example] })

const unauthorized = Type.Object({
  message: Type.String(),
  error: Type.String(),
  code: Type.String({ enum: Object.keys(ADMIN_ERROR_CODES) }),
}, { description: 'No admin token, or a wrong one', examples: [{ message: 'Unauthorized', error: 'The bearer token is not the admin token', code: 'ADMIN_TOKEN_INVALID' }] })

const failed = Type.Object({ message: Type.String(), error: Type.String() }, {
  description: 'The database or every node failed: nothing more is said; the log has the detail. A payout stored before the failure is broadcast by the service\'s checks; send the same idempotency key again to see it',
  examples: [{ message: 'Internal server error', error: 'Unknown error' }],
})

const common = {
  401: unauthorized,
  429: tooManyRequests,
  500: failed,
  503: unavailable,
}

const security = [{ [ADMIN_SCHEME]: [] }]

export const CreatePayoutSchema = {
  tags: ['payouts'],
  summary: 'Pay out from the app\'s wallet (operators)',
  description: 'What `app.payouts.send` does: signs a transaction paying `amountSat` to `to` from the app\'s hot wallet (PAYOUT_KEY_FILE), stores it, then broadcasts it. One idempotency key is one payout, ever: sending the same body again answers the same payout (its state now), and the same key with other terms is 409. Answers 201 for a new payout, 200 for the one the key named already.',
  security,
  body: Type.Object({
    to: Type.String({ description: 'An address of the service\'s network' }),
    amountSat: Type.Integer({ minimum: 1, description: 'Satoshi the receiver gets; from the dust limit up, at most PAYOUT_MAX_SAT' }),
    memo: Type.Optional(Type.String({ description: `At most ${MAX_MEMO_BYTES} bytes of UTF-8, no control characters` })),
    idempotencyKey: Type.String({ pattern: IDEMPOTENCY_KEY_PATTERN, description: 'Names this payout for ever: a retry with the same key never pays twice' }),
  }, { additionalProperties: false, examples: [{ to: ADDRESS, amountSat: 150_000_000, memo: 'Weekly prize', idempotencyKey: 'prize-2026-11-29-alice' }] }),
  response: {
    200: SuccessEnvelope(PayoutView, { message: 'Payout already made', data: EXAMPLE }),
    201: SuccessEnvelope(PayoutView, { message: 'Payout created', data: EXAMPLE }),
    400: refused('The body breaks a rule: nothing was signed', { message: 'Invalid payout', error: 'amountSat must be a whole number of satoshi of at least 546 (the dust limit), got 10', code: 'PAYOUT_ERR_AMOUNT' }),
    409: refused('The key names another payout', { message: 'Idempotency key reused', error: 'idempotency key prize-1 names payout po_… (100000000 satoshi to P…), not this one', code: 'PAYOUT_ERR_KEY_REUSED' }),
    422: refused('A limit, the allowlist or the wallet\'s funds refuse it: nothing was signed', { message: 'Payout refused', error: 'amountSat 20000000000 is above PAYOUT_MAX_SAT (10000000000)', code: 'PAYOUT_ERR_OVER_LIMIT' }),
    ...common,
  },
}

const LogEntry = Type.Object({
  state: Type.String({ enum: [...PAYOUT_STATES] }),
  actor: Type.String({ enum: ['app', 'admin', 'service'], description: 'Who moved it: the app\'s code, an operator, or the service following the chain' }),
  at: Type.String({ format: 'date-time' }),
  detail: Type.Record(Type.String(), Type.Unknown(), { description: 'At signing: the terms and the txid; at a failure: the reason and the node\'s code' }),
})

export const GetPayoutSchema = {
  tags: ['payouts'],
  summary: 'A payout or refund (operators)',
  description: 'Its state now: pending, broadcast, confirmed or failed (with a reason), and its audit log (`log`): each state it reached, who moved it there, when.',
  security,
  params: Type.Object({ id: Type.String({ pattern: '^po_[A-Za-z0-9_-]{16,64}$' }) }),
  response: {
    200: SuccessEnvelope(Type.Intersect([PayoutView, Type.Object({ log: Type.Array(LogEntry) })]), { message: 'Payout retrieved', data: { ...EXAMPLE, log: [{ state: 'pending', actor: 'admin', at: '2026-11-29T10:00:00.000Z', detail: { to: ADDRESS, amountSat: 150_000_000, feeSat: 22_600, txid: EXAMPLE.txid } }, { state: 'broadcast', actor: 'service', at: '2026-11-29T10:00:00.412Z', detail: {} }] } }),
    404: refused('No payout has this id', { message: 'Payout not found', error: 'no payout po_…', code: 'PAYOUT_ERR_NOT_FOUND' }),
    ...common,
  },
}

export const RefundInvoiceSchema = {
  tags: ['payouts'],
  summary: 'Refund a confirmed invoice (operators)',
  description: 'What `app.payments.refund` does: returns the invoice\'s payment, or part of it, to the address its first input spent from. Partial refunds sum to at most what was paid; a refund of an invoice refunded in full is 409 (REFUND_ERR_ALREADY_REFUNDED). With an idempotency key, a retry answers the same refund.',
  security,
  params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
  body: Type.Optional(Type.Object({
    amountSat: Type.Optional(Type.Integer({ minimum: 1, description: 'Satoshi to return; absent: all that is left of the payment' })),
    idempotencyKey: Type.Optional(Type.String({ pattern: IDEMPOTENCY_KEY_PATTERN })),
  }, { additionalProperties: false, examples: [{ amountSat: 50_000_000, idempotencyKey: 'refund-order-42' }] })),
  response: {
    200: SuccessEnvelope(PayoutView, { message: 'Refund already made', data: { ...EXAMPLE, kind: 'refund', invoiceId: 'inv_8Yq2…', idempotencyKey: 'refund:inv_8Yq2…:1' } }),
    201: SuccessEnvelope(PayoutView, { message: 'Refund created', data: { ...EXAMPLE, kind: 'refund', invoiceId: 'inv_8Yq2…', idempotencyKey: 'refund:inv_8Yq2…:1' } }),
    400: refused('The body breaks a rule: nothing was signed', { message: 'Invalid payout', error: 'idempotencyKey must be 1 to 128 characters, …', code: 'PAYOUT_ERR_IDEMPOTENCY_KEY' }),
    404: refused('No invoice has this id', { message: 'Invoice not found', error: 'no invoice inv_…', code: 'REFUND_ERR_INVOICE_NOT_FOUND' }),
    409: refused('Not confirmed, or refunded in full already', { message: 'Refund refused', error: 'invoice inv_… was refunded in full (150000000 satoshi)', code: 'REFUND_ERR_ALREADY_REFUNDED' }),
    422: refused('More than what is left, a limit, no payer, or the wallet\'s funds', { message: 'Refund refused', error: 'amountSat 200000000 is more than the 150000000 satoshi left to refund of the 150000000 paid', code: 'REFUND_ERR_TOO_MUCH' }),
    ...common,
  },
}
