/**
 * `POST /api/telegram/webhook`: where Telegram posts the bot's updates (docs/notifications.md,
 * "Telegram"); registered only while the app has a bot. The secret header is checked before the
 * body is read (401 otherwise); every update with it is answered 200, the ignored ones too, or
 * Telegram would send them again. No sign-in, and a POST: never replayed by the fast path.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { NotificationsService } from '../../notifications/notifications-service.js'
import type { TelegramChannel } from '../../notifications/telegram/telegram-channel.js'
import { TelegramWebhookError } from '../../notifications/telegram/webhook-errors.js'
import { TelegramWebhookSchema } from '../../schemas/notifications.js'

/** An Update with a message of 4096 characters and its entities, with room to spare. */
const UPDATE_BODY_LIMIT = 64 * 1024

const telegramWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  const notifications = app.notifications as NotificationsService
  const telegram = notifications.telegram as TelegramChannel
  app.post('/telegram/webhook', {
    schema: TelegramWebhookSchema,
    bodyLimit: UPDATE_BODY_LIMIT,
    // Telegram posts every user's updates from a few addresses: a per-client limit would refuse
    // them (and Telegram would send them again). The secret's check is a digest, before the body.
    config: { rateLimit: false },
    onRequest: async (request) => {
      const refusal = telegram.refusal(request.headers)
      if (refusal !== undefined) throw new TelegramWebhookError(refusal)
    },
  }, async (request) => {
    const outcome = await notifications.receiveTelegramUpdate({ headers: request.headers, body: request.body })
    if (outcome === 'unauthorized') throw new TelegramWebhookError('wrong_secret')
    return { message: 'Update received', data: { outcome } }
  })
}

export default telegramWebhookRoute
