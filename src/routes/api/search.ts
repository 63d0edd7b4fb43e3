import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEFAULT_PAGE_SIZE } from 'pocketnet-client'
import { sendSuccess } from '../../http/envelope.js'
import { ParameterError } from '../../http/errors.js'
import { assertFinitePaging } from '../../schemas/common.js'
import { SearchSchema } from '../../schemas/search.js'

// The node takes the item offset and the page size plus one (to tell whether a next page
// exists) as signed 32-bit integers.
const INT32_MAX = 2 ** 31 - 1

const searchRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/search', {
    schema: SearchSchema,
    config: { failureMessage: 'Search operation failed', maxAgeMs: app.miniAppConfig.CACHE_TTL_SEARCH_MS, replay: true },
  }, async (request, reply) => {
    // Absent values get their schema defaults before the handler runs.
    const { keyword, page = 0, pageSize = DEFAULT_PAGE_SIZE } = request.query
    assertFinitePaging(request.query)
    if ((page + 1) * pageSize + 1 > INT32_MAX) {
      throw new ParameterError('query parameter', 'page', `must keep (page + 1) × pageSize below ${INT32_MAX} (the node's 32-bit range)`)
    }
    const api = await app.pocketnet.get()
    const data = await api.rpc.search({ keyword: String(keyword), type: 'content', pageStart: Number(page), pageSize: Number(pageSize) })
    // `total` counts the matches up to the end of the page, which holds when the page has any:
    // the pages before it are full. A page past the last match cannot tell how many came
    // before it, and page × pageSize would claim matches that may not exist.
    if (data.results.length === 0 && data.total > 0) return sendSuccess(reply, 'Search completed successfully', { ...data, total: 0 }, data)
    return sendSuccess(reply, 'Search completed successfully', data)
  })
}

export default searchRoute
