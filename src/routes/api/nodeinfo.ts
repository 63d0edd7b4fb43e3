import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { withFailureMessage } from '../../errors.js'
import { NodeInfoSchema } from '../../schemas/nodeinfo.js'
import { sendSuccess } from '../../success-envelope.js'

const nodeInfoRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/nodeinfo', { schema: NodeInfoSchema }, (_request, reply) => withFailureMessage('Failed to retrieve node information', async () => {
    const api = await app.pocketnet.get()
    const data = await api.rpc.getnodeinfo()
    return sendSuccess(reply, 'Node information retrieved successfully', data)
  }))
}

export default nodeInfoRoute
