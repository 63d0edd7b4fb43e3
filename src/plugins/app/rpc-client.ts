/**
 * The one shared Pocketnet client of this app: created on the first request that needs it,
 * shared by every later request, closed when the app closes.
 */
import fp from 'fastify-plugin'
import type { SharedInstance } from '../../../lib/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** `await app.pocketnet.get()` gives the shared client. */
    pocketnet: SharedInstance
  }
}

export default fp<{ client: SharedInstance }>(async (app, { client }) => {
  app.decorate('pocketnet', client)
  app.addHook('onClose', () => client.close())
}, { name: 'rpc-client' })
