/**
 * Why a request was not authenticated: a 401 with a stable `code` (the verifier's SIG_* codes,
 * and the service's AUTH_* ones) and a text that names the rule broken and nothing more, so that
 * a front-end can tell the user what to do and an attacker learns nothing it did not send.
 */
import { SIGNATURE_ERROR_CODES, type SignatureError } from 'pocketnet-client'
import { HttpError } from '../http/errors.js'

/** Every code a 401 of the service can carry, with what it means. */
export const AUTH_ERROR_CODES = {
  AUTH_MISSING: 'The request carries no credentials: send `Authorization: Bearer <token>` (or, where the service accepts them, a Signature header or a signed fetch).',
  AUTH_MALFORMED: 'The Authorization header is not `Bearer <token>` with a token this service issues.',
  AUTH_TOKEN_INVALID: 'The token is unknown, expired or revoked: sign in again.',
  AUTH_CHALLENGE_UNKNOWN: 'The signed challenge was not issued by this service, has expired, or was used already: ask for a new one.',
  AUTH_SIGNATURE_REPLAYED: 'This signature (a Signature header, or a signed fetch\'s `signature`) was accepted once already: each is accepted once.',
  AUTH_TICKET_INVALID: 'The stream ticket is unknown, expired or used already, or its session has ended (sign-out): ask for a new one (POST /api/events/ticket).',
  ...SIGNATURE_ERROR_CODES,
} as const

export type AuthErrorCode = keyof typeof AUTH_ERROR_CODES

/** Where the refusal happened: signing in, or calling a route that needs a signed-in user. */
export type AuthStep = 'sign-in' | 'route'

const TITLES: Record<AuthStep, string> = {
  'sign-in': 'Sign-in failed',
  route: 'Authentication required',
}

export class AuthError extends HttpError {
  override readonly code: AuthErrorCode

  constructor (step: AuthStep, code: AuthErrorCode, detail: string) {
    super(401, TITLES[step], detail)
    this.name = 'AuthError'
    this.code = code
    // RFC 6750: which scheme to use, and, for a token that was sent, that it is not valid.
    this.headers = { 'www-authenticate': code === 'AUTH_MISSING' ? 'Bearer' : 'Bearer error="invalid_token"' }
  }

  static fromSignature (step: AuthStep, err: SignatureError): AuthError {
    return new AuthError(step, err.code, err.message)
  }
}
