/**
 * Sign in with Bastyon (auth/sign-in.ts, docs/sign-in.md): a challenge, the signed challenge
 * traded for a token, and sign-out. Registered only when BASTYON_APP_ID is set. The two sign-in
 * steps share a rate limit of their own (AUTH_RATE_LIMIT_MAX for both together), tighter than the API's.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import type { SignIn } from '../../auth/sign-in.js'
import { HttpError } from '../../http/errors.js'
import { parseWindow } from '../../rate-limit/window.js'
import { ChallengeSchema, SessionSchema, SignOutSchema } from '../../schemas/auth.js'

/** A signature object is about 400 bytes: anything much larger is not one. */
const SESSION_BODY_LIMIT = 4096

const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const signIn = app.signIn as SignIn
  // One count for both steps (groupId): AUTH_RATE_LIMIT_MAX sign-in requests in all, as documented.
  const rateLimit = { max: app.miniAppConfig.AUTH_RATE_LIMIT_MAX, timeWindow: parseWindow(app.miniAppConfig.RATE_LIMIT_WINDOW), groupId: 'sign-in' }

  app.post('/auth/challenge', { schema: ChallengeSchema, config: { rateLimit } }, async () => {
    const { challenge, expiresAt } = await signIn.issueChallenge()
    return { message: 'Challenge issued', data: { challenge, expiresAt: expiresAt.toISOString() } }
  })

  app.post('/auth/session', { schema: SessionSchema, bodyLimit: SESSION_BODY_LIMIT, config: { rateLimit } }, async (request) => {
    const { token, address, expiresAt } = await signIn.openSession(request.body.signature, app.clientKey(request.raw))
    return { message: 'Signed in successfully', data: { token, address, expiresAt: expiresAt.toISOString() } }
  })

  app.delete('/auth/session', { schema: SignOutSchema, config: { auth: true } }, async (request) => {
    const user = signedInUser(request)
    if (user.sessionId === undefined) throw new HttpError(400, 'No session to end', 'Sign-out takes the Bearer token of a session')
    await signIn.revoke(user.sessionId)
    return { message: 'Signed out successfully', data: { address: user.address } }
  })
}

export default authRoutes
