import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import { MeSchema } from '../../schemas/auth.js'
import { LeaveSchema } from '../../schemas/storage.js'

/**
 * The signed-in user: an example of a route marked `auth` (docs/adding-a-route.md); and, while
 * storage or notifications are on, their leaving, which deletes what the service keeps for them alone.
 */
const meRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', {
    schema: MeSchema,
    config: { auth: true, failureMessage: 'Failed to retrieve signed-in user' },
  }, async (request) => {
    const { address } = signedInUser(request)
    const api = await app.pocketnet.get()
    const profiles = await api.rpc.getuserprofile({ address, shortForm: 'basic' })
    // A key that signs need not have an account on the chain yet.
    const profile = profiles.find(candidate => candidate.address === address) ?? null
    return { message: 'Signed-in user retrieved successfully', data: { address, profile } }
  })

  const { storage, notifications } = app
  if (storage === undefined && notifications === undefined) return
  // Records of payment (invoices, entitlements) and of pushes made are kept: they are the app's books, not the user's data.
  app.delete('/me', { schema: LeaveSchema, config: { auth: true } }, async (request, reply) => {
    const { address } = signedInUser(request)
    const deleted = storage === undefined ? {} : { storage: await storage.deleteUser(address) }
    const unregistered = notifications === undefined ? {} : { notifications: await notifications.deleteUser(address) }
    reply.header('cache-control', 'no-store')
    return { message: 'User data deleted successfully', data: { address, ...deleted, ...unregistered } }
  })
}

export default meRoute
