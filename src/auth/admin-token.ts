/**
 * Operators' routes: a route whose config says `admin: true` answers only a request that carries
 * `Authorization: Bearer <ADMIN_TOKEN>`, checked in onRequest, after the rate limit's count (so
 * that guessing costs the guesser's limit) and before the body is read. Without ADMIN_TOKEN such a
 * route answers 404, as if it were not there; a missing or wrong token is a 401 with a stable code.
 * The token is compared as a digest, in constant time.
 *
 * ```ts
 * app.post('/admin/things', { config: { admin: true } }, handler)
 * ```
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../http/errors.js'

export const ADMIN_ERROR_CODES = {
  ADMIN_TOKEN_MISSING: 'The request carries no `Authorization: Bearer <ADMIN_TOKEN>`.',
  ADMIN_TOKEN_INVALID: 'The bearer token is not the service\'s ADMIN_TOKEN.',
} as const

export type AdminErrorCode = keyof typeof ADMIN_ERROR_CODES

export class AdminTokenError extends HttpError {
  override readonly code: AdminErrorCode

  constructor (code: AdminErrorCode) {
    super(401, 'Unauthorized', code === 'ADMIN_TOKEN_MISSING' ? 'This route needs Authorization: Bearer <ADMIN_TOKEN>' : 'The bearer token is not the admin token')
    this.name = 'AdminTokenError'
    this.code = code
    this.headers = { 'www-authenticate': code === 'ADMIN_TOKEN_MISSING' ? 'Bearer realm="admin"' : 'Bearer realm="admin", error="invalid_token"' }
  }
}

/** Compared as digests: equal lengths whatever was sent, so the comparison takes the same time. */
function digest (text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** The check of one request against `token` (undefined: no admin routes, 404). */
export function adminCheck (token: string | undefined): (request: FastifyRequest) => Promise<void> {
  const expected = token === undefined || token === '' ? undefined : digest(token)
  return async function requireAdminToken (request) {
    if (expected === undefined) throw new HttpError(404, 'Not found', `Route ${request.method}:${request.url} not found`)
    const given = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
    if (given === undefined) throw new AdminTokenError('ADMIN_TOKEN_MISSING')
    if (!timingSafeEqual(digest(given), expected)) throw new AdminTokenError('ADMIN_TOKEN_INVALID')
  }
}

export default fp(async (app) => {
  const check = adminCheck(app.miniAppConfig.ADMIN_TOKEN)
  app.addHook('onRoute', (route: RouteOptions) => {
    const admin = route.config?.admin
    if (admin === undefined || admin === false) return
    if (admin !== true) throw new Error(`${[route.method].flat().join(',')} ${route.url}: config.admin must be true or false (got ${JSON.stringify(admin)})`)
    route.onRequest = [...[route.onRequest ?? []].flat(), check]
  })
}, { name: 'admin-token', dependencies: ['rate-limit'] })
