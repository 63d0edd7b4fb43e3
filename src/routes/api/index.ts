/**
 * The mini-app API, mounted at `/api` by app.ts. One file per route; a new route is a new file
 * and one line here (docs/adding-a-route.md).
 */
import type { FastifyPluginAsync } from 'fastify'
import adminNotificationRoutes from './admin-notifications.js'
import adminPayoutRoutes from './admin-payouts.js'
import authRoutes from './auth.js'
import catalogRoutes from './catalog.js'
import collectionRoutes from './collections.js'
import contentRoutes from './content.js'
import eventRoutes from './events.js'
import meRoute from './me.js'
import myEntitlementsRoute from './my-entitlements.js'
import nodeInfoRoute from './nodeinfo.js'
import notificationRoutes from './notifications.js'
import paymentRoutes from './payments.js'
import postRoute from './post.js'
import searchRoute from './search.js'
import storageRoutes from './storage.js'
import tagsRoute from './tags.js'
import telegramWebhookRoute from './telegram-webhook.js'
import userRoute from './user.js'

const apiRoutes: FastifyPluginAsync = async (api) => {
  await api.register(nodeInfoRoute)
  await api.register(userRoute)
  await api.register(searchRoute)
  await api.register(postRoute)
  await api.register(contentRoutes)
  await api.register(tagsRoute)
  await api.register(eventRoutes)
  // Payments, when PAYMENT_ADDRESS turns them on.
  if (api.payments !== undefined) await api.register(paymentRoutes)
  // Sign-in, when BASTYON_APP_ID turns it on.
  if (api.signIn !== undefined) {
    await api.register(authRoutes)
    await api.register(meRoute)
    await api.register(myEntitlementsRoute)
  }
  // The catalogue, when CATALOG_FILE names one (with payments and sign-in on: config.ts).
  if (api.miniAppConfig.CATALOG_FILE !== '') await api.register(catalogRoutes)
  // Storage, on with sign-in unless STORAGE=false.
  if (api.storage !== undefined) {
    await api.register(storageRoutes)
    await api.register(collectionRoutes)
  }
  // Notifications, on with sign-in unless NOTIFICATIONS=false; the bot's webhook while TELEGRAM_BOT_TOKEN is set; the operators' send while ADMIN_TOKEN is set.
  if (api.notifications !== undefined) {
    await api.register(notificationRoutes)
    if (api.notifications.telegram !== undefined) await api.register(telegramWebhookRoute)
    if (api.miniAppConfig.ADMIN_TOKEN !== '') await api.register(adminNotificationRoutes)
  }
  // Payouts and refunds, for operators: with a hot wallet (PAYOUT_KEY_FILE) and ADMIN_TOKEN.
  if (api.payouts !== undefined && api.miniAppConfig.ADMIN_TOKEN !== '') await api.register(adminPayoutRoutes)
}

export default apiRoutes
