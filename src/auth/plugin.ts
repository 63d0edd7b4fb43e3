/**
 * Sign-in in Fastify: `app.signIn` (sign-in.ts; undefined while BASTYON_APP_ID is unset), its
 * store (in process, or in Redis when REDIS_URL is set), and the route option that protects a
 * route in one line:
 *
 * ```ts
 * app.get('/orders', { config: { auth: true } }, async (request) => listOrders(signedInUser(request).address))
 * ```
 *
 * A route marked `auth: true` runs an onRequest hook after the rate limit's: without valid
 * credentials it answers 401 before its body is read; with them, `request.user` says who called.
 * `auth: 'optional'` checks the credentials that came the same way (401 when they do not hold)
 * and lets a caller without any through, `request.user` null. Either route is never replayed by
 * the fast path (fast-path/recorder.ts refuses the combination at start-up), and an answer to a
 * signed-in caller is never stored by a cache (http/http-cache.ts).
 *
 * A signed fetch (AUTH_ACCEPT_SIGNED_FETCH) carries its signature in the JSON body, which is read
 * after onRequest: for a request that has such a body and no credentials in its headers, the
 * check waits for a preValidation hook, after the body is parsed and before the route's schema
 * sees it. A request with no body still gets its 401 before anything is read.
 */
import type { FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import '../http/route-policy.js'
import { MemoryAuthStore, type AuthKind, type AuthKindLimits } from './auth-store.js'
import { RedisAuthStore } from './redis-auth-store.js'
import { SignIn, type AuthUser } from './sign-in.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Sign-in, when BASTYON_APP_ID is set. */
    signIn: SignIn | undefined
  }
  interface FastifyRequest {
    /** Who called a route marked `auth`; null for an anonymous caller of an `auth: 'optional'` route, and on every route without the mark. */
    user: AuthUser | null
  }
}

const routeOf = (request: FastifyRequest): string => `${request.method} ${request.routeOptions.url ?? request.url}`

/**
 * The caller of a route marked `auth`. On an `auth: 'optional'` route called without credentials
 * it throws the 401 `AUTH_MISSING`: the handler reached a step only a signed-in user may take. On
 * a route without the mark it throws (a 500) rather than let a handler go on without knowing who
 * calls.
 */
export function signedInUser (request: FastifyRequest): AuthUser {
  if (request.user !== null) return request.user
  const signIn = request.server.signIn
  if (request.routeOptions.config?.auth === 'optional' && signIn !== undefined) throw signIn.missingCredentials()
  throw new Error(`${routeOf(request)} reads the signed-in user but is not marked config.auth`)
}

/**
 * The caller of a route marked `auth: 'optional'` (or `auth: true`): who signed in, or null for a
 * caller who sent no credentials. On a route without the mark it throws (a 500): there it would
 * always be null, and the handler would treat every user as anonymous.
 */
export function optionalUser (request: FastifyRequest): AuthUser | null {
  const auth = request.routeOptions.config?.auth
  if (auth !== true && auth !== 'optional') throw new Error(`${routeOf(request)} reads the caller but is not marked config.auth`)
  return request.user
}

/** Whether a request may be a signed fetch: a JSON body is coming, whose `signature` may be its credential. */
function mayBeSignedFetch (request: FastifyRequest): boolean {
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers
  return request.mediaType === 'application/json' && (encoding !== undefined || (length !== undefined && length !== '0'))
}

/** The JSON body's `signature` member, taken out of it (the route's schema sees the body without it); undefined when it has none. */
function takeSignature (request: FastifyRequest): { signature: unknown } | undefined {
  const body = request.body
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'signature')) return undefined
  const { signature } = body as { signature: unknown }
  delete (body as { signature?: unknown }).signature
  return { signature }
}

/** Adds `hook` to the route's own `kind` hooks once: Fastify makes a GET route's HEAD twin from the GET's options, hooks included. */
function addRouteHook (route: RouteOptions, kind: 'onRequest' | 'preValidation', hook: (request: FastifyRequest) => Promise<void>): void {
  const hooks = [route[kind] ?? []].flat()
  if (!hooks.includes(hook)) route[kind] = [...hooks, hook]
}

export interface AuthPluginOptions {
  /** Milliseconds since the epoch, for signatures, challenges and sessions (tests). */
  now?: (() => number) | undefined
}

export default fp<AuthPluginOptions>(async (app, { now = Date.now }) => {
  const config = app.miniAppConfig
  app.decorateRequest('user', null)
  let signIn: SignIn | undefined
  if (config.BASTYON_APP_ID !== '') {
    const limits: Record<AuthKind, AuthKindLimits> = {
      challenge: { max: config.AUTH_MAX_CHALLENGES, whenFull: 'evict' },
      session: { max: config.AUTH_MAX_SESSIONS, whenFull: 'evict' },
      // Forgetting a header before its expiry would let it be replayed: refuse new ones instead.
      signature: { max: config.AUTH_MAX_SESSIONS, whenFull: 'refuse' },
      // A forgotten ticket only makes its stream ask for another.
      ticket: { max: config.AUTH_MAX_SESSIONS, whenFull: 'evict' },
    }
    signIn = new SignIn({
      appId: config.BASTYON_APP_ID,
      network: config.POCKETNET_NETWORK,
      store: app.redis === undefined ? new MemoryAuthStore(limits, now) : new RedisAuthStore(app.redis, limits, now),
      challengeTtlMs: config.AUTH_CHALLENGE_TTL_S * 1000,
      sessionTtlMs: config.AUTH_SESSION_TTL_S * 1000,
      acceptSignatureHeader: config.AUTH_ACCEPT_SIGNATURE_HEADER,
      acceptSignedFetch: config.AUTH_ACCEPT_SIGNED_FETCH,
      signatureChecksPerSecond: config.AUTH_SIGNATURE_CHECKS_PER_S,
      now,
    })
  }
  app.decorate('signIn', signIn)

  // The hooks exist only with sign-in on: onRoute refuses a route marked auth without it.
  const on = signIn as SignIn
  const clientOf = (request: FastifyRequest) => () => app.clientKey(request.raw)
  /** `auth: true`: valid credentials or 401; a request that may be a signed fetch waits for its body. */
  const authenticate = async function authenticate (request: FastifyRequest): Promise<void> {
    if (on.acceptsSignedFetch && !on.carriesCredentials(request.headers) && mayBeSignedFetch(request)) return
    request.user = await on.authenticate(request.headers, clientOf(request))
  }
  /** `auth: 'optional'`: the credentials that came are checked; a caller who sent none is anonymous. */
  const authenticateIfSent = async function authenticateIfSent (request: FastifyRequest): Promise<void> {
    if (on.carriesCredentials(request.headers)) request.user = await on.authenticate(request.headers, clientOf(request))
  }
  /** A signed fetch: the parsed body's `signature`, when the headers brought no credentials. */
  const authenticateSignedFetch = async function authenticateSignedFetch (request: FastifyRequest): Promise<void> {
    const taken = takeSignature(request)
    // Headers come first, as the Authorization header comes before a Signature header.
    if (request.user !== null) return
    if (taken !== undefined) request.user = await on.authenticateSignedFetch(taken.signature, app.clientKey(request.raw))
    else if (request.routeOptions.config?.auth === true) throw on.missingCredentials()
  }
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth
    if (auth === undefined || auth === false) return
    const name = `${[route.method].flat().join(',')} ${route.url}`
    if (auth !== true && auth !== 'optional') throw new Error(`${name}: config.auth must be true, 'optional' or false (got ${JSON.stringify(auth)})`)
    if (signIn === undefined) {
      throw new Error(`${name} ${auth === true ? 'needs a signed-in user' : 'may have a signed-in user'} (config.auth), but sign-in is off: set BASTYON_APP_ID to the mini-app's id`)
    }
    addRouteHook(route, 'onRequest', auth === true ? authenticate : authenticateIfSent)
    if (signIn.acceptsSignedFetch) addRouteHook(route, 'preValidation', authenticateSignedFetch)
  })
}, { name: 'auth', dependencies: ['redis', 'rate-limit'] })
