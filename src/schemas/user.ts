import { Type } from 'typebox'
import { Address } from './common.js'
import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

export const UserSchema = {
  summary: 'User profile by address',
  description: 'Calls the Pocketnet RPC `getuserprofile` with the short form. 404 when no account has the address.',
  params: Type.Object({ address: Address }),
  response: {
    200: SuccessEnvelope(PassThroughObject),
    ...ErrorResponses,
  },
}
