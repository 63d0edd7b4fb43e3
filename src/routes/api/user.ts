import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sendSuccess } from '../../http/envelope.js'
import { HttpError } from '../../http/errors.js'
import { UserSchema } from '../../schemas/user.js'

const userRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/user/:address', {
    schema: UserSchema,
    config: { failureMessage: 'Failed to retrieve user profile', maxAgeMs: app.miniAppConfig.CACHE_TTL_PROFILE_MS, replay: true },
  }, async (request, reply) => {
    const { address } = request.params
    const api = await app.pocketnet.get()
    // The node answers a list of the accounts it found; an unknown address is simply absent.
    const profiles = await api.rpc.getuserprofile({ address, shortForm: 'basic' })
    const data = profiles.find(profile => profile.address === address)
    if (data === undefined) throw new HttpError(404, 'User profile not found', `No Pocketnet account has the address ${address}`)
    return sendSuccess(reply, 'User profile retrieved successfully', data, profiles)
  })
}

export default userRoute
