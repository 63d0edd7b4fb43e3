import { Type } from 'typebox'
import { Address } from './common.js'
import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

export const UserSchema = {
  tags: ['pocketnet'],
  summary: 'User profile by address',
  description: 'Calls the Pocketnet RPC `getuserprofile` with the short form. 404 when no account has the address.',
  params: Type.Object({ address: Address }),
  response: {
    200: SuccessEnvelope(PassThroughObject, {
      message: 'User profile retrieved successfully',
      data: {
        address: 'PTXSe2Gyg9XogaRZCDgDgJ65AZcD1tidUX',
        name: 'david_pkoin0',
        i: 'https://bastyon.com/images/avatars/1.png',
        reputation: 12.5,
        postcnt: 90,
        subscribers_count: 14,
        regdate: 1757780140,
      },
    }),
    ...ErrorResponses,
  },
}
