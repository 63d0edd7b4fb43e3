/** Schemas of sign-in (/api/auth/...) and of the signed-in user (/api/me). */
import { Type } from 'typebox'
import { AUTH_ERROR_CODES } from '../auth/auth-errors.js'
import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

/** The OpenAPI security scheme of routes marked `auth` (plugins/external/swagger.ts). */
export const BEARER_SCHEME = 'bearer'

const AUTH_CODES = Object.keys(AUTH_ERROR_CODES)

/** 401, with the stable `code` a front-end can test. */
export const Unauthorized = Type.Object({
  message: Type.String(),
  error: Type.String(),
  code: Type.String({ enum: AUTH_CODES, description: 'Stable reason: docs/sign-in.md lists them all' }),
}, {
  description: 'Not signed in: no credentials, or credentials refused; `code` says which rule failed. `WWW-Authenticate: Bearer` comes with it',
  examples: [{ message: 'Authentication required', error: 'The token is unknown, expired or revoked', code: 'AUTH_TOKEN_INVALID' }],
})

const { 400: badRequest, 429: tooManyRequests, 500: failed, 503: unavailable } = ErrorResponses

/** A Bastyon signature object, as `sdk.sign(challenge)` returns it; verifySignature checks its fields. */
const SignatureObject = Type.Object({}, {
  additionalProperties: true,
  description: 'The object `sdk.sign(challenge)` returned, unchanged: {nonce, signature, pubkey, address, v}',
  examples: [{ nonce: 'date=2026-11-24T10:00:00.000Z,exp=360,s=…', signature: '…128 hex…', pubkey: '02…', address: 'P…', v: 1 }],
})

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601' })

export const ChallengeSchema = {
  tags: ['auth'],
  summary: 'Start sign-in: a single-use challenge to sign',
  description: 'Answers a random challenge (ASCII, URL-safe). The mini-app calls `sdk.sign(challenge)` and sends the result to `POST /api/auth/session` before `expiresAt`.',
  response: {
    200: SuccessEnvelope(Type.Object({ challenge: Type.String(), expiresAt: Timestamp }), {
      message: 'Challenge issued',
      data: { challenge: 'q3vX0dPz6Qk1b8hNw2YtLr5sJm9cFa4E', expiresAt: '2026-11-24T10:05:00.000Z' },
    }),
    429: tooManyRequests,
    503: unavailable,
  },
}

export const SessionSchema = {
  tags: ['auth'],
  summary: 'Finish sign-in: trade the signed challenge for a token',
  description: 'The signature must be made for the session `<challenge>/<BASTYON_APP_ID>`, with a challenge this service issued, unexpired and unused (it is used up here). Send the token as `Authorization: Bearer <token>`.',
  body: Type.Object({ signature: SignatureObject }, { additionalProperties: false }),
  response: {
    200: SuccessEnvelope(Type.Object({ token: Type.String(), address: Type.String(), expiresAt: Timestamp }), {
      message: 'Signed in successfully',
      data: { token: 'mJ1kQz…43 characters…', address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', expiresAt: '2026-11-25T10:00:00.000Z' },
    }),
    400: badRequest,
    401: Unauthorized,
    429: tooManyRequests,
    503: unavailable,
  },
}

export const SignOutSchema = {
  tags: ['auth'],
  summary: 'Sign out: revoke the token',
  description: 'The token stops working on every instance.',
  security: [{ [BEARER_SCHEME]: [] }],
  response: {
    200: SuccessEnvelope(Type.Object({ address: Type.String() }), { message: 'Signed out successfully', data: { address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX' } }),
    400: badRequest,
    401: Unauthorized,
    503: unavailable,
  },
}

export const MeSchema = {
  tags: ['auth'],
  summary: 'The signed-in user',
  description: 'The caller\'s address, and their profile from `getuserprofile` (null for an address with no account yet).',
  security: [{ [BEARER_SCHEME]: [] }],
  response: {
    200: SuccessEnvelope(Type.Object({ address: Type.String(), profile: Type.Union([PassThroughObject, Type.Null()]) }), {
      message: 'Signed-in user retrieved successfully',
      data: { address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', profile: { address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', name: 'lea_art', reputation: 12.5 } },
    }),
    401: Unauthorized,
    429: tooManyRequests,
    500: failed,
    503: unavailable,
  },
}
