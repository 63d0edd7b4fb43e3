import { Type } from 'typebox'
import { CONTENT_EXAMPLE, Page, PageSize, PARAMETER_RULES } from './common.js'
import { ErrorResponses, PagedResults, PassThroughObject, SuccessEnvelope } from './envelope.js'

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: `The content's hash (any version of it): ${PARAMETER_RULES.hash}` })

/** A comment as `getcomments` answers it (short keys, numbers as strings; passed through). */
const COMMENT_EXAMPLE = {
  id: '5b1f0c…',
  postid: 'c60d1e6b03b5…',
  address: 'PDXnfk67tvSSRQ4exMLqrx6Ujh2aihJFcM',
  time: '1763779500',
  block: '3099990',
  msg: '{"message":"Great post!","url":"","images":[]}',
  parentid: '',
  answerid: '',
  scoreUp: '2',
  scoreDown: '0',
  reputation: '12',
  children: '1',
}

export const ContentSchema = {
  tags: ['pocketnet'],
  summary: 'A post or video with its author',
  description: "Calls the Pocketnet RPC `getcontent` for one content: its latest version, with scores, comment count and the author's short profile (`userprofile`). 404 when no content has the hash.",
  params: Type.Object({ hash: Hash }),
  response: {
    200: SuccessEnvelope(PassThroughObject, {
      message: 'Content retrieved successfully',
      data: { ...CONTENT_EXAMPLE, txid: 'c60d1e6b03b5…', scoreCnt: '12', scoreSum: '55', comments: 3 },
    }),
    ...ErrorResponses,
  },
}

export const CommentsSchema = {
  tags: ['pocketnet'],
  summary: 'Top-level comments of a content, newest first',
  description: 'Calls the Pocketnet RPC `getcontent` for the content\'s stable id, then `getcomments` for its top-level comments, newest first, one page at a time. 404 when no content has the hash.',
  params: Type.Object({ hash: Hash }),
  querystring: Type.Object({ page: Type.Optional(Page), pageSize: Type.Optional(PageSize) }),
  response: {
    200: SuccessEnvelope(PagedResults("The node's comments, passed through (numbers as strings, `msg` a JSON text)", 'Top-level comments in all'), {
      message: 'Comments retrieved successfully',
      data: { results: [COMMENT_EXAMPLE], total: 1, hasMore: false },
    }),
    ...ErrorResponses,
  },
}
