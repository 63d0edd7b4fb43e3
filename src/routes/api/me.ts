import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import { MeSchema } from '../../schemas/auth.js'

/** The signed-in user: an example of a route marked `auth` (docs/adding-a-route.md). */
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
}

export default meRoute
