/**
 * `/healthz` (the process is alive) and `/readyz` (a Pocketnet node is usable; with payouts on,
 * the hot wallet's address and balance), for orchestrators
 * and load balancers, which poll them from a few addresses: not rate limited. Under event-loop
 * pressure (http/under-pressure.ts) `/healthz` still answers, a busy process being alive, while
 * `/readyz` answers 503 like the API, so that a load balancer sends the traffic elsewhere.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorText } from '../http/error-handler.js'
import { servedUnderPressure } from '../http/under-pressure.js'
import type { PayoutsService } from '../payouts/payouts-service.js'
import { HealthzSchema, ReadyzSchema } from '../schemas/health.js'

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: HealthzSchema, config: { rateLimit: false, pressureHandler: servedUnderPressure } }, async () => ({ message: 'Alive' }))

  app.get('/readyz', { schema: ReadyzSchema, config: { rateLimit: false } }, async (_request, reply) => {
    let api
    try {
      api = await app.pocketnet.get()
    } catch (err) {
      return reply.code(503).send({ message: 'Not ready', error: errorText(err) })
    }
    // Node URLs may be private hosts: answers name nodes by position only.
    const nodes = api.nodes().map(({ url: _url, ...state }) => state)
    const usableNodes = nodes.filter(node => node.usable).length
    const payouts = app.payouts === undefined ? undefined : await payoutWallet(app.payouts)
    return reply.code(usableNodes > 0 ? 200 : 503).send({
      message: usableNodes > 0 ? 'Ready' : 'Not ready',
      // Redis only shares work: without it the instance serves, so it never fails readiness.
      data: { usableNodes, bestHeight: api.bestHeight, redis: app.redis?.state ?? 'off', nodes, ...(payouts === undefined ? {} : { payouts }) },
    })
  })
}

/** The hot wallet's address, and its balance when a node could list it (it never fails readiness). */
async function payoutWallet (payouts: PayoutsService): Promise<{ address: string, balanceSat?: number }> {
  try {
    const { address, balanceSat } = await payouts.wallet()
    return { address, balanceSat }
  } catch {
    return { address: payouts.address }
  }
}

export default healthRoutes
