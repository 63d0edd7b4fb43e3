/**
 * `POST /api/admin/notifications`: `app.notifications.send` for operators, behind ADMIN_TOKEN
 * (auth/admin-token.ts; registered only while it is set). Never replayed, never cached.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { NotificationsService } from '../../notifications/notifications-service.js'
import { AdminSendSchema } from '../../schemas/notifications.js'

/** 1000 addresses and the rest of the body, with room to spare. */
const SEND_BODY_LIMIT = 64 * 1024

const adminNotificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const notifications = app.notifications as NotificationsService
  app.post('/admin/notifications', { schema: AdminSendSchema, bodyLimit: SEND_BODY_LIMIT, config: { admin: true } }, async (request) => {
    return { message: 'Notification sent', data: await notifications.send(request.body) }
  })
}

export default adminNotificationRoutes
