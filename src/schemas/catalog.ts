/** Schemas of the catalogue (/api/catalog/...): docs/entitlements.md, "A catalogue". */
import { Type } from 'typebox'
import { BEARER_SCHEME, Unauthorized } from './auth.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'
import { INVOICE_EXAMPLE, Invoice } from './payments.js'

const { 400: badRequest, 404: notFound, 429: tooManyRequests, 500: failed, 503: unavailable } = ErrorResponses

const Sku = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', description: "A SKU: 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or a digit" })

const CatalogItem = Type.Object({
  sku: Type.String(),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  priceSat: Type.Integer({ description: 'Satoshi (1 PKOIN = 100,000,000)' }),
  durationS: Type.Optional(Type.Integer({ description: 'Seconds it is held for, from the current end while held (a renewal); absent: for good' })),
})

const ITEM_EXAMPLE = { sku: 'premium.monthly', title: 'Premium, one month', priceSat: 150_000_000, durationS: 2_592_000 }

export const CatalogSchema = {
  tags: ['entitlements'],
  summary: 'What the app sells (CATALOG_FILE)',
  response: {
    200: SuccessEnvelope(Type.Object({ items: Type.Array(CatalogItem) }), { message: 'Catalogue retrieved successfully', data: { items: [ITEM_EXAMPLE] } }),
    429: tooManyRequests,
  },
}

export const CatalogInvoiceSchema = {
  tags: ['entitlements'],
  summary: 'Buy a catalogue item: an invoice at its price that grants it to the signed-in user once confirmed',
  description: 'Answers the invoice as the payments routes do; its `hostRequest` goes to `sdk.payment(...)`. The item is granted to the caller in the transaction that confirms the invoice, once.',
  security: [{ [BEARER_SCHEME]: [] }],
  params: Type.Object({ sku: Sku }),
  response: {
    200: SuccessEnvelope(Invoice, { message: 'Invoice created', data: { ...INVOICE_EXAMPLE, metadata: { sku: ITEM_EXAMPLE.sku }, grant: { sku: ITEM_EXAMPLE.sku, to: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', durationS: ITEM_EXAMPLE.durationS } } }),
    400: badRequest,
    401: Unauthorized,
    404: notFound,
    429: tooManyRequests,
    500: failed,
    503: unavailable,
  },
}
