import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

export const NodeInfoSchema = {
  summary: 'Node information',
  description: 'Calls the Pocketnet RPC `getnodeinfo`: version, chain, last block.',
  response: {
    200: SuccessEnvelope(PassThroughObject),
    ...ErrorResponses,
  },
}
