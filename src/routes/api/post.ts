import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEFAULT_CACHE_TTL_MS } from 'pocketnet-client'
import { sendSuccess } from '../../http/envelope.js'
import { HttpError } from '../../http/errors.js'
import { PostSchema } from '../../schemas/post.js'

const postRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/post/:hash', {
    schema: PostSchema,
    config: { failureMessage: 'Failed to retrieve post', maxAgeMs: DEFAULT_CACHE_TTL_MS.getcontent, replay: true },
  }, async (request, reply) => {
    const { hash } = request.params
    const api = await app.pocketnet.get()
    // getcontent takes a list of hashes and answers the posts it found, in no set order (null
    // for a hash that is not a post). Its third position is left out: any value but 1 there
    // makes a 0.22 node answer [] (the typed method takes 1 only).
    const posts = await api.rpc.getcontent({ hashes: [hash] })
    const post = posts.find(item => item?.hash === hash || item?.txid === hash)
    if (post == null) throw new HttpError(404, 'Post not found', `No post has the hash ${hash}`)
    return sendSuccess(reply, 'Post retrieved successfully', post, posts)
  })
}

export default postRoute
