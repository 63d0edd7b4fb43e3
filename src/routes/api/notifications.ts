/**
 * The signed-in user's notification channels (docs/notifications.md): opt in with the proxy the
 * host's `registerForNotifications()` gave, opt out, and list; and, while the app has a Telegram
 * bot, link a chat through a deep link and unlink it. Per user: marked `auth`, so never replayed
 * by the fast path and never stored by a cache.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { signedInUser } from '../../auth/plugin.js'
import type { NotificationsService } from '../../notifications/notifications-service.js'
import { NotificationChannelsSchema, RegisterBastyonSchema, TelegramLinkSchema, UnlinkTelegramSchema, UnregisterBastyonSchema } from '../../schemas/notifications.js'

const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const notifications = app.notifications as NotificationsService

  app.get('/me/notifications', { schema: NotificationChannelsSchema, config: { auth: true } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Notification channels retrieved successfully', data: { channels: await notifications.channels(address) } }
  })

  app.put('/me/notifications/bastyon', { schema: RegisterBastyonSchema, config: { auth: true } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Notifications on', data: await notifications.register(address, request.body.proxy) }
  })

  app.delete('/me/notifications/bastyon', { schema: UnregisterBastyonSchema, config: { auth: true } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Notifications off', data: { removed: await notifications.unregister(address) } }
  })

  if (notifications.telegram === undefined) return

  app.post('/me/notifications/telegram', { schema: TelegramLinkSchema, config: { auth: true } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Telegram link created', data: notifications.telegramLink(address) }
  })

  app.delete('/me/notifications/telegram', { schema: UnlinkTelegramSchema, config: { auth: true } }, async (request) => {
    const { address } = signedInUser(request)
    return { message: 'Telegram unlinked', data: { removed: await notifications.unlinkTelegram(address) } }
  })
}

export default notificationRoutes
