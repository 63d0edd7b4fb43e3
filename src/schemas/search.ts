import { Type } from 'typebox'
import { CONTENT_EXAMPLE, Keyword, Page, PageSize } from './common.js'
import { ErrorResponses, PagedResults, SuccessEnvelope } from './envelope.js'

export const SearchSchema = {
  tags: ['pocketnet'],
  summary: 'Content search',
  description: 'Calls the Pocketnet RPC `search` for posts and videos, newest first, one page at a time.',
  querystring: Type.Object({ keyword: Keyword, page: Type.Optional(Page), pageSize: Type.Optional(PageSize) }),
  response: {
    200: SuccessEnvelope(PagedResults("The node's content items, passed through", 'Matches up to the end of this page (the node cannot count all matches); 0 on a page past the last match'), {
      message: 'Search completed successfully',
      data: {
        results: [CONTENT_EXAMPLE],
        total: 1,
        hasMore: true,
      },
    }),
    ...ErrorResponses,
  },
}
