import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEFAULT_CACHE_TTL_MS } from 'pocketnet-client'
import { sendSuccess } from '../../http/envelope.js'
import { assertFinitePaging } from '../../schemas/common.js'
import { TagsSchema } from '../../schemas/tags.js'

const tagsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/tags', {
    schema: TagsSchema,
    config: { failureMessage: 'Failed to retrieve tags', maxAgeMs: DEFAULT_CACHE_TTL_MS.gettags, replay: true },
  }, async (request, reply) => {
    const { lang = 'en', pageSize = 50 } = request.query
    assertFinitePaging(request.query)
    const api = await app.pocketnet.get()
    // The node reads gettags' paging as decimal strings: the client sends them so.
    const tags = await api.rpc.gettags({ pageStart: 0, pageSize, lang })
    return sendSuccess(reply, 'Tags retrieved successfully', tags)
  })
}

export default tagsRoute
