import { Type } from 'typebox'
import { MAX_PAGE_SIZE, PARAMETER_RULES } from './common.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

export const TagsSchema = {
  tags: ['pocketnet'],
  summary: 'Popular tags',
  description: 'Calls the Pocketnet RPC `gettags`: the most used tags of a language, most used first.',
  querystring: Type.Object({
    lang: Type.Optional(Type.String({ pattern: '^[a-z]{2}$', default: 'en', description: `Content language: ${PARAMETER_RULES.lang}` })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 50, description: `Tags to answer: ${PARAMETER_RULES.pageSize}` })),
  }),
  response: {
    200: SuccessEnvelope(Type.Array(Type.Object({ tag: Type.String(), count: Type.Integer() }, { additionalProperties: true })), {
      message: 'Tags retrieved successfully',
      data: [{ tag: 'bitcoin', count: 412 }, { tag: 'music', count: 97 }],
    }),
    ...ErrorResponses,
  },
}
