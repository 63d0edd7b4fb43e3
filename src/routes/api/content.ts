import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEFAULT_CACHE_TTL_MS, DEFAULT_PAGE_SIZE, type GetcontentResult, type PocketNetProxyApi } from 'pocketnet-client'
import { sendSuccess } from '../../http/envelope.js'
import { HttpError } from '../../http/errors.js'
import { assertFinitePaging } from '../../schemas/common.js'
import { CommentsSchema, ContentSchema } from '../../schemas/content.js'

type Content = NonNullable<GetcontentResult[number]>

/**
 * The content `hash` names, by any of its versions: `getcontent` answers the latest version,
 * in no set order, with null for a hash that is not content (a comment).
 */
async function contentOf (api: PocketNetProxyApi, hash: string): Promise<{ content: Content, answer: GetcontentResult }> {
  const answer = await api.rpc.getcontent({ hashes: [hash] })
  const content = answer.find((item): item is Content => item !== null && (item.hash === hash || item.txid === hash))
  if (content === undefined) throw new HttpError(404, 'Content not found', `No post or video has the hash ${hash}`)
  return { content, answer }
}

const contentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/content/:hash', {
    schema: ContentSchema,
    config: { failureMessage: 'Failed to retrieve content', maxAgeMs: DEFAULT_CACHE_TTL_MS.getcontent, replay: true },
  }, async (request, reply) => {
    const { content, answer } = await contentOf(await app.pocketnet.get(), request.params.hash)
    return sendSuccess(reply, 'Content retrieved successfully', content, answer)
  })

  app.get('/content/:hash/comments', {
    schema: CommentsSchema,
    config: { failureMessage: 'Failed to retrieve comments', maxAgeMs: DEFAULT_CACHE_TTL_MS.getcomments, replay: true },
  }, async (request, reply) => {
    const { page = 0, pageSize = DEFAULT_PAGE_SIZE } = request.query
    assertFinitePaging(request.query)
    const api = await app.pocketnet.get()
    // Comments key on the content's root transaction, whichever version the hash names.
    const { content } = await contentOf(api, request.params.hash)
    const comments = await api.rpc.getcomments({ postid: typeof content.txid === 'string' ? content.txid : request.params.hash })
    // The node answers every top-level comment, unpaged and in no set order.
    const newestFirst = [...comments].sort((a, b) => Number(b.time) - Number(a.time) || String(b.id).localeCompare(String(a.id)))
    const start = page * pageSize
    const results = newestFirst.slice(start, start + pageSize)
    return sendSuccess(reply, 'Comments retrieved successfully', { results, total: comments.length, hasMore: start + pageSize < comments.length }, comments)
  })
}

export default contentRoutes
