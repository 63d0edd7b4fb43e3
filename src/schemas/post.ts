import { Type } from 'typebox'
import { CONTENT_EXAMPLE, PARAMETER_RULES } from './common.js'
import { ErrorResponses, PassThroughObject, SuccessEnvelope } from './envelope.js'

export const PostSchema = {
  tags: ['pocketnet'],
  summary: 'A post by its hash',
  description: 'Calls the Pocketnet RPC `getcontent` for one post or video: its latest version, with scores, comment count and the author\'s short profile. 404 when no post has the hash.',
  params: Type.Object({
    hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: `The post's hash (any version of it): ${PARAMETER_RULES.hash}` }),
  }),
  response: {
    200: SuccessEnvelope(PassThroughObject, {
      message: 'Post retrieved successfully',
      data: { ...CONTENT_EXAMPLE, txid: 'c60d1e6b03b5…', scoreCnt: '12', scoreSum: '55', comments: 3 },
    }),
    ...ErrorResponses,
  },
}
