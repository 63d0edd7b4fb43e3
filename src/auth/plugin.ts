/**
 * Sign-in in Fastify: `app.signIn` (sign-in.ts; undefined while BASTYON_APP_ID is unset), its
 * store (in process, or in Redis when REDIS_URL is set), and the route option that protects a
 * route in one line:
 *
 * ```ts
 * app.get('/orders', { config: { auth: true } }, async (request) => listOrders(signedInUser(request).address))
 * ```
 *
 * A route marked `auth` runs an onRequest hook after the rate limit's: without valid credentials
 * it answers 401 before its body is read; with them, `request.user` says who called. Such a route
 * is never replayed by the fast path (fast-path/recorder.ts refuses the combination at start-up).
 */
import type { FastifyRequest } from 'fastify'
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
    /** Who called a route marked `auth`; null on every other route. */
    user: AuthUser | null
  }
}

/**
 * The caller of a route marked `auth`. On a route without the mark it throws (a 500) rather
 * than let a handler go on without knowing who calls.
 */
export function signedInUser (request: FastifyRequest): AuthUser {
  if (request.user === null) throw new Error(`${request.method} ${request.routeOptions.url ?? request.url} reads the signed-in user but is not marked config.auth`)
  return request.user
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
      signatureChecksPerSecond: config.AUTH_SIGNATURE_CHECKS_PER_S,
      now,
    })
  }
  app.decorate('signIn', signIn)

  const authenticate = async function authenticate (request: FastifyRequest): Promise<void> {
    request.user = await (signIn as SignIn).authenticate(request.headers as { authorization?: string, signature?: string }, () => app.clientKey(request.raw))
  }
  app.addHook('onRoute', (route) => {
    if (route.config?.auth !== true) return
    if (signIn === undefined) {
      throw new Error(`${[route.method].flat().join(',')} ${route.url} needs a signed-in user (config.auth), but sign-in is off: set BASTYON_APP_ID to the mini-app's id`)
    }
    const hooks = [route.onRequest ?? []].flat()
    // Fastify makes a GET route's HEAD twin from the GET's options, hook included.
    if (!hooks.includes(authenticate)) route.onRequest = [...hooks, authenticate]
  })
}, { name: 'auth', dependencies: ['redis', 'rate-limit'] })
