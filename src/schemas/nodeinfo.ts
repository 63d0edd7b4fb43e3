import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

export const NodeInfoSchema = {
  tags: ['pocketnet'],
  summary: 'Node information',
  description: 'Calls the Pocketnet RPC `getnodeinfo`: version, chain, last block.',
  response: {
    200: SuccessEnvelope(PassThroughObject, {
      message: 'Node information retrieved successfully',
      data: {
        version: '0.22.7',
        time: 1763800000,
        chain: 'main',
        proxy: true,
        netstakeweight: 51234567890123,
        lastblock: { height: 3100000, hash: '9f2c6b0e5d…', time: 1763800000, ntx: 7 },
        proxies: [],
        ports: { node: 37070, api: 38081, rest: 38080, wss: 8087, http: 38081, https: 38881 },
      },
    }),
    ...ErrorResponses,
  },
}
