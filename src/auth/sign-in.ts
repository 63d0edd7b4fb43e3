/**
 * Sign in with Bastyon: the service issues a random single-use challenge, the mini-app has the
 * host sign it (`sdk.sign(challenge)`, whose session is `<challenge>/<appId>`), and the service
 * trades the signature for a bearer token. docs/sign-in.md has the flow and the threat model;
 * pocketnet-client's verifySignature checks the signature itself.
 *
 * Tokens are 256 random bits. The store keeps only their SHA-256, so a copy of the store (a
 * Redis dump, a backup) holds no usable token.
 */
import { createHash, randomBytes } from 'node:crypto'
import { SignatureError, verifySignature, type PocketnetNetwork, type VerifiedSignature } from 'pocketnet-client'
import { ServiceUnavailableError } from '../http/errors.js'
import { AuthError, type AuthStep } from './auth-errors.js'
import type { AuthStore } from './auth-store.js'
import { SignatureBudget, type BudgetScope } from './signature-budget.js'

/** Who made a request to a route marked `auth`. */
export interface AuthUser {
  /** The signer's Pocketnet address. */
  address: string
  /**
   * A bearer token from sign-in; or one signature accepted once, with no session: a Signature
   * header (compatibility mode) or a signed fetch's (the host's `sdk.fetch`, in the body).
   */
  via: 'token' | 'signature'
  /** When the credentials stop being accepted. */
  expiresAt: Date
  /** The session's id in the store (the token's hash); undefined for a Signature header. */
  sessionId?: string
}

export interface SignInOptions {
  /** The mini-app's manifest id: sessions are `<challenge>/<appId>`. */
  appId: string
  network: PocketnetNetwork
  store: AuthStore
  challengeTtlMs: number
  sessionTtlMs: number
  /** Compatibility mode: also accept the ecosystem's `Signature: <JSON>` header, once each. */
  acceptSignatureHeader: boolean
  /** Also accept the host's signed fetch: a signature of the session `<appId>` as a JSON body's `signature`, once each. */
  acceptSignedFetch: boolean
  /** Most signatures checked per second by this process, shared fairly between clients and networks; past it, 503. */
  signatureChecksPerSecond: number
  /** Milliseconds since the epoch. */
  now: () => number
}

/** The request headers sign-in reads. */
export interface RequestHeaders {
  authorization?: string | undefined
  signature?: string | string[] | undefined
}

export interface Challenge {
  challenge: string
  expiresAt: Date
}

export interface OpenedSession {
  token: string
  address: string
  expiresAt: Date
}

/** 24 random bytes in base64url: ASCII, URL-safe, and the same in the host's hex as in UTF-8. */
const CHALLENGE = /^[A-Za-z0-9_-]{32}$/
/** The host's hex of an ASCII text: bytes 0x00 to 0x7F. App ids and challenges are ASCII. */
const ASCII_HEX = /^(?:[0-7][0-9a-f])*$/
/** 32 random bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/
const BEARER = /^Bearer +(\S+) *$/i
/** The nonce's session, in the host's hex (docs/bastyon-signatures.md). */
const NONCE_SESSION = /,s=((?:[0-9a-f]{2}){1,256})$/
/** Lets verifySignature run its checks in order when the nonce names no challenge: no session matches it. */
const NO_SESSION = ''
/** The clock skew verifySignature allows; a signature accepted once is remembered this much past its expiry. */
const CLOCK_SKEW_MS = 60_000
/**
 * The lifetime the host gives a signed fetch's signature. An object of the same session that says
 * longer (an `account()`'s 1280 s) is held to it: a signed request is sent as soon as it is signed.
 */
const SIGNED_FETCH_MAX_AGE_S = 360
/** What a 503 past the budget says, by who has no check left. */
const BUSY: Record<BudgetScope, string> = {
  client: 'Sign-in is busy for this client: it sent more signatures than its share of the checks this server makes per second',
  network: 'Sign-in is busy for this client\'s network: it sent more signatures than its share of the checks this server makes per second',
  process: 'Sign-in is busy: more signatures arrived than this server checks per second',
}

const sessionIdOf = (token: string): string => createHash('sha256').update(token).digest('base64url')

/** What the store keeps of a stream ticket: whose it is, and the session it was issued in. */
interface IssuedTicket {
  address: string
  sessionId?: string
}

/** A stored ticket; undefined for one this version cannot read (an earlier one's): refused, the client asks for another. */
function parseTicket (stored: string): IssuedTicket | undefined {
  try {
    const issued = JSON.parse(stored) as Partial<IssuedTicket> | null
    return typeof issued?.address === 'string' ? { address: issued.address, ...(typeof issued.sessionId === 'string' ? { sessionId: issued.sessionId } : {}) } : undefined
  } catch {
    return undefined
  }
}

export class SignIn {
  readonly #options: SignInOptions
  readonly #store: AuthStore
  readonly #budget: SignatureBudget

  constructor (options: SignInOptions) {
    this.#options = options
    this.#store = options.store
    this.#budget = new SignatureBudget(options.signatureChecksPerSecond, options.now)
  }

  /** A new challenge, remembered (with its expiry as the value) until it expires or is used. */
  async issueChallenge (): Promise<Challenge> {
    const challenge = randomBytes(24).toString('base64url')
    const expiresAt = this.#options.now() + this.#options.challengeTtlMs
    await this.#store.add('challenge', challenge, String(expiresAt), expiresAt)
    return { challenge, expiresAt: new Date(expiresAt) }
  }

  /**
   * Trades `sdk.sign(challenge)`'s object for a token. The first signature presented for a
   * challenge uses it up, accepted or refused: so each challenge issued buys at most one curve
   * check, a forged signature costs its sender a fresh challenge (and two requests of the sign-in
   * rate limit), and of two uses of one signature only one is checked. A signature for a challenge
   * never issued costs one lookup. Past the check budget (signature-budget.ts) nothing is checked,
   * and the challenge is put back: the same signature may be sent again after Retry-After.
   * @param client the caller's rate-limit key, whose share of the check budget this uses
   * @throws AuthError (401) for every refusal; ServiceUnavailableError (503) past the budget
   */
  async openSession (signature: unknown, client: string): Promise<OpenedSession> {
    const { appId, now } = this.#options
    const challenge = this.#challengeNamedBy(signature)
    if (challenge === undefined) {
      this.#verify('sign-in', signature, NO_SESSION)
      throw new AuthError('sign-in', 'SIG_SESSION_MISMATCH', `The signature must be made for the session <challenge>/${appId}`)
    }
    const taken = await this.#store.take('challenge', challenge)
    if (taken === undefined) throw unknownChallenge()
    try {
      this.#spendCheck(client)
    } catch (err) {
      // An earlier version kept no expiry with the challenge: it gets a whole time to live again.
      const expiresAt = Number(taken) > 0 ? Number(taken) : now() + this.#options.challengeTtlMs
      await this.#store.add('challenge', challenge, String(expiresAt), expiresAt)
      throw err
    }
    const verified = this.#verify('sign-in', signature, `${challenge}/${appId}`)
    const token = randomBytes(32).toString('base64url')
    const expiresAt = now() + this.#options.sessionTtlMs
    await this.#store.add('session', sessionIdOf(token), JSON.stringify({ address: verified.address, expiresAt }), expiresAt)
    return { token, address: verified.address, expiresAt: new Date(expiresAt) }
  }

  /** Ends the session, wherever it was opened. */
  async revoke (sessionId: string): Promise<boolean> {
    return await this.#store.take('session', sessionId) !== undefined
  }

  /** Whether signed fetches are accepted (AUTH_ACCEPT_SIGNED_FETCH): a route must then wait for a JSON body before it says 401. */
  get acceptsSignedFetch (): boolean {
    return this.#options.acceptSignedFetch
  }

  /**
   * Whether the headers carry credentials of a kind this service reads: an Authorization header,
   * or, in compatibility mode, a Signature header. They are then checked, and a 401 when they do
   * not hold, even where a caller without credentials is welcome (`auth: 'optional'`).
   */
  carriesCredentials (headers: RequestHeaders): boolean {
    return headers.authorization !== undefined || (this.#options.acceptSignatureHeader && typeof headers.signature === 'string')
  }

  /**
   * The user a request's headers prove: a bearer token, or, in compatibility mode and without an
   * Authorization header, a Signature header.
   * @param clientOf the caller's rate-limit key, asked only for a Signature header (it costs a check)
   * @throws AuthError (401); ServiceUnavailableError (503) past the check budget
   */
  async authenticate (headers: RequestHeaders, clientOf: () => string): Promise<AuthUser> {
    const { authorization, signature } = headers
    if (authorization !== undefined) return this.#userOfToken(authorization)
    if (this.#options.acceptSignatureHeader && typeof signature === 'string') return this.#userOfSignatureHeader(signature, clientOf())
    throw this.missingCredentials()
  }

  /** The 401 for a request with no credentials, naming every kind this service accepts. */
  missingCredentials (): AuthError {
    const kinds = [
      'Authorization: Bearer <token> from sign-in',
      ...(this.#options.acceptSignatureHeader ? ['a Signature header'] : []),
      ...(this.#options.acceptSignedFetch ? ['a JSON body signed by the host\'s fetch (its "signature")'] : []),
    ]
    return new AuthError('route', 'AUTH_MISSING', `Send ${kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')}, or ${kinds.at(-1)}`}`)
  }

  /**
   * The user a signed fetch proves: the signature the host's `sdk.fetch` puts in the JSON body as
   * `signature`, of the session `<appId>` (docs/bastyon-signatures.md), accepted once, and at most
   * 360 s after its date. Such a session is a fixed string, which is why the mode is off by
   * default (docs/sign-in.md). Each call costs one check of the client's share of the budget.
   * @throws AuthError (401); ServiceUnavailableError (503) past the check budget
   */
  async authenticateSignedFetch (signature: unknown, client: string): Promise<AuthUser> {
    return this.#userOfOneSignature(signature, client, [this.#options.appId], SIGNED_FETCH_MAX_AGE_S, 'This signed request\'s signature was used before; each is accepted once')
  }

  /**
   * A stream ticket for `user`: what an EventSource, which cannot send an Authorization header,
   * puts in its URL instead of the token (routes/api/events.ts). Random, short-lived, used once,
   * and worth only the user's own notifications: a ticket that leaks in a log is of no use later.
   * It is worth no more than its session: once the session ends (sign-out), so does the ticket.
   */
  async issueTicket (user: AuthUser, ttlMs: number): Promise<{ ticket: string, expiresAt: Date }> {
    const ticket = randomBytes(24).toString('base64url')
    const expiresAt = Math.min(this.#options.now() + ttlMs, user.expiresAt.getTime())
    const issued: IssuedTicket = { address: user.address, ...(user.sessionId === undefined ? {} : { sessionId: user.sessionId }) }
    await this.#store.add('ticket', sessionIdOf(ticket), JSON.stringify(issued), expiresAt)
    return { ticket, expiresAt: new Date(expiresAt) }
  }

  /**
   * The address a stream ticket was issued for, using the ticket up.
   * @throws AuthError AUTH_TICKET_INVALID (401) for a ticket unknown, expired or used, or whose session ended
   */
  async redeemTicket (ticket: string): Promise<string> {
    const stored = CHALLENGE.test(ticket) ? await this.#store.take('ticket', sessionIdOf(ticket)) : undefined
    const issued = stored === undefined ? undefined : parseTicket(stored)
    // A session ended since (sign-out, or revoked) takes its tickets with it. A ticket of a
    // Signature header has no session: it lives within the header's lifetime only.
    const sessionOpen = issued?.sessionId === undefined || await this.#store.get('session', issued.sessionId) !== undefined
    if (issued === undefined || !sessionOpen) throw new AuthError('route', 'AUTH_TICKET_INVALID', 'The stream ticket is unknown, expired or used already, or its session has ended')
    return issued.address
  }

  async #userOfToken (authorization: string): Promise<AuthUser> {
    const token = BEARER.exec(authorization)?.[1]
    if (token === undefined || !TOKEN.test(token)) throw new AuthError('route', 'AUTH_MALFORMED', 'The Authorization header must be Bearer <token>, with the token sign-in gave')
    const sessionId = sessionIdOf(token)
    const stored = await this.#store.get('session', sessionId)
    if (stored === undefined) throw new AuthError('route', 'AUTH_TOKEN_INVALID', 'The token is unknown, expired or revoked')
    const { address, expiresAt } = JSON.parse(stored) as { address: string, expiresAt: number }
    return { address, via: 'token', expiresAt: new Date(expiresAt), sessionId }
  }

  /**
   * The ecosystem's header: an `account()` object (session `<appId>`) or a `sign("auth")` one
   * (`auth/<appId>`). Any proxy the user talks to can get such an object from the host, which is
   * why this mode is off by default (docs/sign-in.md); each is accepted once, within its lifetime.
   * Each header that is JSON costs one check of the client's share of the budget.
   */
  async #userOfSignatureHeader (header: string, client: string): Promise<AuthUser> {
    let object: unknown
    try {
      object = JSON.parse(header)
    } catch {
      throw new AuthError('route', 'SIG_MALFORMED', 'The Signature header must be the JSON of a Bastyon signature')
    }
    const { appId } = this.#options
    return this.#userOfOneSignature(object, client, [appId, `auth/${appId}`], undefined, 'This Signature header was used before; each is accepted once')
  }

  /**
   * A signature of one of `sessions` (fixed strings, no challenge), checked after one check of the
   * budget, then remembered until its expiry plus the skew in the store's `signature` kind, which
   * is shared through Redis: of two uses, on one instance or two, only the first is accepted.
   * @param maxAgeSeconds the longest lifetime accepted, whatever the object says (verifySignature's default when undefined)
   */
  async #userOfOneSignature (object: unknown, client: string, sessions: [string, ...string[]], maxAgeSeconds: number | undefined, replayed: string): Promise<AuthUser> {
    this.#spendCheck(client)
    const verified = this.#verifyForAny(object, sessions, maxAgeSeconds)
    const expiresAt = verified.expiresAt.getTime()
    if (!await this.#store.add('signature', verified.signature, '', expiresAt + CLOCK_SKEW_MS)) {
      throw new AuthError('route', 'AUTH_SIGNATURE_REPLAYED', replayed)
    }
    return { address: verified.address, via: 'signature', expiresAt: verified.expiresAt }
  }

  /** verifySignature for the first of `sessions` the object names (a session mismatch is found before any curve arithmetic). */
  #verifyForAny (object: unknown, [session, ...others]: [string, ...string[]], maxAgeSeconds: number | undefined): VerifiedSignature {
    try {
      return this.#verify('route', object, session, maxAgeSeconds)
    } catch (err) {
      const [next, ...rest] = others
      if (next === undefined || !(err instanceof AuthError) || err.code !== 'SIG_SESSION_MISMATCH') throw err
      return this.#verifyForAny(object, [next, ...rest], maxAgeSeconds)
    }
  }

  /** One check of the budget for `client`, or a 503 saying whose share is spent. */
  #spendCheck (client: string): void {
    const refusal = this.#budget.take(client)
    if (refusal !== undefined) throw new ServiceUnavailableError(BUSY[refusal.scope], refusal.retryAfterSeconds)
  }

  /**
   * verifySignature, after #spendCheck. With NO_SESSION it never reaches the curve (no session
   * matches it), so it needs no check of the budget: it only tells which rule failed.
   */
  #verify (step: AuthStep, signature: unknown, session: string, maxAgeSeconds?: number): VerifiedSignature {
    try {
      return verifySignature(signature, {
        session,
        network: this.#options.network,
        now: this.#options.now(),
        clockSkewSeconds: CLOCK_SKEW_MS / 1000,
        maxAgeSeconds,
      })
    } catch (err) {
      if (err instanceof SignatureError) throw AuthError.fromSignature(step, err)
      throw err
    }
  }

  /** The challenge in the session the object was signed for, if that session is `<challenge>/<appId>`. */
  #challengeNamedBy (signature: unknown): string | undefined {
    const nonce = (signature as { nonce?: unknown } | null)?.nonce
    if (typeof nonce !== 'string') return undefined
    const hex = NONCE_SESSION.exec(nonce)?.[1]
    // Ours is ASCII, and for ASCII the host's hex is the bytes' hex. A byte above 0x7F is a letter
    // of another script, such as a look-alike in the app id: verifySignature names the refusal.
    if (hex === undefined || !ASCII_HEX.test(hex)) return undefined
    const session = Buffer.from(hex, 'hex').toString('latin1')
    const slash = session.indexOf('/')
    const challenge = session.slice(0, slash)
    return slash > 0 && CHALLENGE.test(challenge) && session.slice(slash + 1) === this.#options.appId ? challenge : undefined
  }
}

function unknownChallenge (): AuthError {
  return new AuthError('sign-in', 'AUTH_CHALLENGE_UNKNOWN', 'The challenge was not issued by this service, has expired, or was used already')
}
