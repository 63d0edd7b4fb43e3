import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sendSuccess } from '../../http/envelope.js'
import { NodeInfoSchema } from '../../schemas/nodeinfo.js'

const nodeInfoRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/nodeinfo', {
    schema: NodeInfoSchema,
    config: { failureMessage: 'Failed to retrieve node information', maxAgeMs: app.miniAppConfig.CACHE_TTL_NODEINFO_MS, replay: true },
  }, async (_request, reply) => {
    const api = await app.pocketnet.get()
    const data = await api.rpc.getnodeinfo()
    return sendSuccess(reply, 'Node information retrieved successfully', data)
  })
}

export default nodeInfoRoute
