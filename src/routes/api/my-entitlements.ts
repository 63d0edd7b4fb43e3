import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import { entitlementView } from '../../entitlements/entitlement-view.js'
import { MyEntitlementsSchema } from '../../schemas/entitlements.js'

/**
 * What the signed-in user holds now (docs/entitlements.md). Marked `auth`: never replayed by the
 * fast path, and without `maxAgeMs` answered `Cache-Control: no-store`, so no cache keeps one
 * user's answer for another.
 */
const myEntitlementsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me/entitlements', {
    schema: MyEntitlementsSchema,
    config: { auth: true, failureMessage: 'Failed to retrieve entitlements' },
  }, async (request) => {
    const held = await app.entitlements.list(signedInUser(request).address)
    return { message: 'Entitlements retrieved successfully', data: { entitlements: held.map(entitlementView) } }
  })
}

export default myEntitlementsRoute
