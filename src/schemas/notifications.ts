/**
 * Schemas of notifications (docs/notifications.md): the signed-in user's opt-in
 * (/api/me/notifications...), the Telegram bot's webhook (POST /api/telegram/webhook) and the
 * operators' send (POST /api/admin/notifications).
 */
import { Type } from 'typebox'
import { ADMIN_ERROR_CODES } from '../auth/admin-token.js'
import { NOTIFICATION_ERROR_CODES } from '../notifications/notification-errors.js'
import { ID_PATTERN, MAX_HEADER_CHARS, MAX_PATH_CHARS, MAX_RECIPIENTS } from '../notifications/notification-rules.js'
import { SEND_STATUSES } from '../notifications/notifications-service.js'
import { TELEGRAM_WEBHOOK_ERROR_CODES } from '../notifications/telegram/webhook-errors.js'
import { BEARER_SCHEME, Unauthorized } from './auth.js'
import { ErrorResponses, SuccessEnvelope } from './envelope.js'

const { 429: tooManyRequests, 503: unavailable } = ErrorResponses

/** The OpenAPI security scheme of the admin routes (plugins/external/swagger.ts). */
export const ADMIN_SCHEME = 'adminToken'

const signedIn = [{ [BEARER_SCHEME]: [] }]
const ADDRESS = 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX'
const PROXY = 'https://1.pocketnet.app:8899'

const refused = Type.Object({
  message: Type.String(),
  error: Type.String(),
  code: Type.Optional(Type.String({ enum: Object.keys(NOTIFICATION_ERROR_CODES), description: 'Stable reason: docs/notifications.md lists them all (absent when the body broke its schema)' })),
}, { description: 'The body breaks a rule: nothing was recorded or sent', examples: [{ message: 'Proxy not allowed', error: 'proxy must be one of the proxies this service sends to (https://1.pocketnet.app:8899, …), got "https://evil.example"', code: 'NOTIFY_ERR_PROXY_NOT_ALLOWED' }] })

const databaseFailed = Type.Object({ message: Type.String(), error: Type.String() }, {
  description: 'The database failed (or could not be opened): nothing more is said; the log has the detail',
  examples: [{ message: 'Internal server error', error: 'Unknown error' }],
})

const BastyonChannelView = Type.Object({
  channel: Type.Literal('bastyon'),
  proxy: Type.String({ description: 'The origin of the Bastyon proxy tried first: the one that last took a push for the user, or the one named at opt-in' }),
  since: Type.String({ format: 'date-time', description: 'When the user opted in (ISO 8601)' }),
})

const TelegramChannelView = Type.Object({
  channel: Type.Literal('telegram'),
  since: Type.String({ format: 'date-time', description: 'When the user first linked a Telegram chat (ISO 8601). The chat\'s id is not shown: the page has no use for it' }),
})

const ChannelView = Type.Union([BastyonChannelView, TelegramChannelView])

export const NotificationChannelsSchema = {
  tags: ['notifications'],
  summary: 'The signed-in user\'s notification channels',
  description: 'Where the app can reach the user outside the mini-app: empty until the user opts in (PUT /api/me/notifications/bastyon, or a Telegram chat linked through POST /api/me/notifications/telegram). A Telegram channel is listed only while the app has a bot (TELEGRAM_BOT_TOKEN).',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({ channels: Type.Array(ChannelView) }), { message: 'Notification channels retrieved successfully', data: { channels: [{ channel: 'bastyon', proxy: PROXY, since: '2026-11-24T10:00:00.000Z' }, { channel: 'telegram', since: '2026-11-25T08:30:00.000Z' }] } }),
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const RegisterBastyonSchema = {
  tags: ['notifications'],
  summary: 'Opt in: notifications through the user\'s Bastyon proxy',
  description: 'Call after the host\'s `registerForNotifications()` resolved: one of the Bastyon proxies now holds a token for this app and user. The host does not say which (it resolves the proxy\'s token row), so `proxy` is optional: without it, pushes try the proxies of NOTIFY_BASTYON_PROXIES in order and remember the one that took the push. With it (an origin `https://host[:port]` the front-end learned otherwise), that proxy is tried first; only origins of NOTIFY_BASTYON_PROXIES are taken (400 `NOTIFY_ERR_PROXY_NOT_ALLOWED` otherwise). Again: the channel moves, `since` kept.',
  security: signedIn,
  body: Type.Object({
    proxy: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The origin of the proxy to try first. Default: the first of NOTIFY_BASTYON_PROXIES', examples: [PROXY] })),
  }, { additionalProperties: false, examples: [{}, { proxy: PROXY }] }),
  response: {
    200: SuccessEnvelope(BastyonChannelView, { message: 'Notifications on', data: { channel: 'bastyon', proxy: PROXY, since: '2026-11-24T10:00:00.000Z' } }),
    400: refused,
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const UnregisterBastyonSchema = {
  tags: ['notifications'],
  summary: 'Opt out of notifications through the Bastyon proxy',
  description: 'The app sends the user nothing more through it; notifications queued and not yet pushed are dropped. `removed` is false when the user had not opted in. (The token stays at the proxy until the host removes it; without this channel the service never uses it.)',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({ removed: Type.Boolean() }), { message: 'Notifications off', data: { removed: true } }),
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const TelegramLinkSchema = {
  tags: ['notifications'],
  summary: 'A Telegram deep link that links the chat it is opened in',
  description: 'Only while the app has a bot (TELEGRAM_BOT_TOKEN). The front-end shows `link` (or a QR code of it); the user opens it in Telegram and presses Start, which sends `/start <token>` from their chat to the bot: the chat is linked to the signed-in user, once (a link works once, on any instance), before `expiresAt` (10 minutes). The bot answers the chat either way. The token names the user\'s address encrypted and signed: Telegram, which sees it, learns nothing of the account. Linking another chat replaces the first. Each call makes a new link; nothing is stored until one is used.',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({
      link: Type.String({ description: 'https://t.me/<bot>?start=<token>' }),
      expiresAt: Type.String({ format: 'date-time', description: 'When the link stops working (ISO 8601)' }),
    }), { message: 'Telegram link created', data: { link: 'https://t.me/my_app_bot?start=AVxO2ZQAAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywt', expiresAt: '2026-11-24T10:10:00.000Z' } }),
    401: Unauthorized,
    429: tooManyRequests,
    503: unavailable,
  },
}

export const UnlinkTelegramSchema = {
  tags: ['notifications'],
  summary: 'Unlink the Telegram chat',
  description: 'Only while the app has a bot (TELEGRAM_BOT_TOKEN). The app sends the user nothing more through Telegram; what was queued and not yet sent is dropped. `removed` is false when no chat was linked. (A user who blocks the bot is unlinked too, at the next notification.)',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({ removed: Type.Boolean() }), { message: 'Telegram unlinked', data: { removed: true } }),
    401: Unauthorized,
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}

export const TelegramWebhookSchema = {
  tags: ['notifications'],
  summary: 'The Telegram bot\'s webhook (Telegram calls it)',
  description: 'Only while the app has a bot (TELEGRAM_BOT_TOKEN). Telegram POSTs each Update here with the header `X-Telegram-Bot-Api-Secret-Token` (the secret given to setWebhook: TELEGRAM_WEBHOOK_SECRET, or one made from the token); without it, or with another, 401 before the body is read. `/start <token>` in a private chat links the chat (see POST /api/me/notifications/telegram); every other update is answered 200 and ignored, or answered in the chat with how to link, so that Telegram does not send it again. `outcome` says which. Not rate limited per client: Telegram sends every user\'s updates from a few addresses. A body of at most 64 KiB.',
  body: Type.Object({}, { additionalProperties: true, description: 'A Telegram Update' }),
  response: {
    200: SuccessEnvelope(Type.Object({
      outcome: Type.String({ enum: ['linked', 'refused', 'answered', 'ignored'], description: '`linked`: the chat was linked; `refused`: the token was expired, forged or used (the bot said so in the chat); `answered`: another message (the bot said how to link); `ignored`: not a message from a person in a private chat' }),
    }), { message: 'Update received', data: { outcome: 'linked' } }),
    401: Type.Object({
      message: Type.String(),
      error: Type.String(),
      code: Type.String({ enum: Object.keys(TELEGRAM_WEBHOOK_ERROR_CODES) }),
    }, { description: 'Not Telegram: no secret header, or another secret', examples: [{ message: 'Unauthorized', error: 'The secret header is not the webhook\'s secret', code: 'TELEGRAM_SECRET_INVALID' }] }),
    500: databaseFailed,
    503: unavailable,
  },
}

const Status = Type.String({ enum: [...SEND_STATUSES] })

export const AdminSendSchema = {
  tags: ['notifications'],
  summary: 'Send a notification (operators)',
  description: 'What `app.notifications.send` does, for operators: needs `Authorization: Bearer <ADMIN_TOKEN>` (the route exists only while ADMIN_TOKEN is set). One result per address, in the order given: `sent` (delivered through one of the user\'s channels at least: a push to their Bastyon proxy, a message to their Telegram chat), `queued` (stored, not pushed yet when the answer was written: it will be, or given up), `failed` (given up), `not_registered` (the user has not opted in), `duplicate` (the same `id` reached the user in the last 24 h), `rate_limited` (the user\'s interval or day, or the app\'s day).',
  security: [{ [ADMIN_SCHEME]: [] }],
  body: Type.Object({
    to: Type.Union([Type.String(), Type.Array(Type.String())], { description: `An address, or a list of 1 to ${MAX_RECIPIENTS} (NOTIFY_ERR_RECIPIENTS otherwise)` }),
    header: Type.String({ description: `1 to ${MAX_HEADER_CHARS} characters, no control characters: the push reads "<app name>: <header>"` }),
    path: Type.String({ description: `Where the host opens the app: a path inside it starting with one /, printable ASCII, at most ${MAX_PATH_CHARS} characters` }),
    id: Type.String({ description: `The de-duplication id (${ID_PATTERN}): the same id reaches a user once in 24 h` }),
  }, { additionalProperties: false, examples: [{ to: [ADDRESS], header: 'Your order shipped', path: '/orders/42', id: 'order-42-shipped' }] }),
  response: {
    200: SuccessEnvelope(Type.Object({ results: Type.Array(Type.Object({ address: Type.String(), status: Status })) }), { message: 'Notification sent', data: { results: [{ address: ADDRESS, status: 'sent' }] } }),
    400: Type.Object({
      message: Type.String(),
      error: Type.String(),
      code: Type.Optional(Type.String({ enum: Object.keys(NOTIFICATION_ERROR_CODES) })),
    }, { description: 'The body breaks a rule: nothing was sent', examples: [{ message: 'Invalid notification', error: 'header must be 1 to 100 characters without control characters (got 140 characters)', code: 'NOTIFY_ERR_HEADER' }] }),
    401: Type.Object({
      message: Type.String(),
      error: Type.String(),
      code: Type.String({ enum: Object.keys(ADMIN_ERROR_CODES) }),
    }, { description: 'No admin token, or a wrong one', examples: [{ message: 'Unauthorized', error: 'The bearer token is not the admin token', code: 'ADMIN_TOKEN_INVALID' }] }),
    429: tooManyRequests,
    500: databaseFailed,
    503: unavailable,
  },
}
