/** Schemas of what the signed-in user holds (/api/me/entitlements): docs/entitlements.md. */
import { Type } from 'typebox'
import { BEARER_SCHEME, Unauthorized } from './auth.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

const { 429: tooManyRequests, 500: failed, 503: unavailable } = ErrorResponses

const Entitlement = Type.Object({
  sku: Type.String(),
  grantedAt: Type.String({ format: 'date-time', description: 'When the latest grant of this SKU was made' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it ends, renewals included; null: never' }),
  invoiceId: Type.Union([Type.String(), Type.Null()], { description: 'The invoice that paid for the latest grant; null when the app granted it' }),
})

export const MyEntitlementsSchema = {
  tags: ['entitlements'],
  summary: 'What the signed-in user holds now',
  description: 'One entry per SKU held now, by SKU. Ended and revoked ones are not listed (the app\'s server code reads every grant with `app.entitlements.history`). Never cached.',
  security: [{ [BEARER_SCHEME]: [] }],
  response: {
    200: SuccessEnvelope(Type.Object({ entitlements: Type.Array(Entitlement) }), {
      message: 'Entitlements retrieved successfully',
      data: { entitlements: [{ sku: 'premium', grantedAt: '2026-11-25T06:42:55.812Z', expiresAt: '2026-12-25T06:42:55.812Z', invoiceId: 'inv_q3vX0dPz6Qk1b8hNw2YtLr' }] },
    }),
    401: Unauthorized,
    429: tooManyRequests,
    500: failed,
    503: unavailable,
  },
}
