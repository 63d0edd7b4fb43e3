import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { HttpError, withFailureMessage } from '../../errors.js'
import { UserSchema } from '../../schemas/user.js'
import { sendSuccess } from '../../success-envelope.js'

const userRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/user/:address', { schema: UserSchema }, (request, reply) => withFailureMessage('Failed to retrieve user profile', async () => {
    const { address } = request.params
    const api = await app.pocketnet.get()
    // The node answers a list of the accounts it found; an unknown address is simply absent.
    const profiles = await api.rpc.getuserprofile({ address, shortForm: 'basic' })
    const data = profiles.find(profile => profile.address === address)
    if (data === undefined) throw new HttpError(404, 'User profile not found', `No Pocketnet account has the address ${address}`)
    return sendSuccess(reply, 'User profile retrieved successfully', data, profiles)
  }))
}

export default userRoute
