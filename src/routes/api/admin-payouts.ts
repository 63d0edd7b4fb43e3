/**
 * The operators' payouts (docs/payouts.md), behind ADMIN_TOKEN (auth/admin-token.ts; registered
 * only while it is set and payouts are on): `POST /api/admin/payouts`, `GET
 * /api/admin/payouts/{id}`, `POST /api/admin/invoices/{id}/refund`. Never cached, never replayed.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { PayoutsService } from '../../payouts/payouts-service.js'
import { CreatePayoutSchema, GetPayoutSchema, RefundInvoiceSchema } from '../../schemas/payouts.js'

const adminPayoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const payouts = app.payouts as PayoutsService
  app.post('/admin/payouts', { schema: CreatePayoutSchema, config: { admin: true } }, async (request, reply) => {
    const { created, payout } = await payouts.send(request.body, 'admin')
    return reply.code(created ? 201 : 200).send({ message: created ? 'Payout created' : 'Payout already made', data: payout })
  })
  app.get('/admin/payouts/:id', { schema: GetPayoutSchema, config: { admin: true } }, async (request) => {
    const payout = await payouts.get(request.params.id)
    return { message: 'Payout retrieved', data: { ...payout, log: await payouts.history(payout.id) } }
  })
  app.post('/admin/invoices/:id/refund', { schema: RefundInvoiceSchema, config: { admin: true } }, async (request, reply) => {
    const { created, payout } = await payouts.refund(request.params.id, request.body ?? {}, 'admin')
    return reply.code(created ? 201 : 200).send({ message: created ? 'Refund created' : 'Refund already made', data: payout })
  })
}

export default adminPayoutRoutes
