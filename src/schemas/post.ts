import { Type } from 'typebox'
import { PARAMETER_RULES } from './common.js'
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
      data: {
        hash: 'c60d1e6b03b5…',
        txid: 'c60d1e6b03b5…',
        address: 'PDXnfk67tvSSRQ4exMLqrx6Ujh2aihJFcM',
        time: '1763779420',
        type: 'share',
        c: 'Pourquoi café compte',
        m: "Quelqu'un d'autre aime expresso autant que moi ?",
        t: ['coffee'],
        scoreCnt: '12',
        scoreSum: '55',
        comments: 3,
        userprofile: { name: 'lea_art', i: 'https://bastyon.com/images/avatars/7.png' },
      },
    }),
    ...ErrorResponses,
  },
}
