/**
 * Schemas of notifications (docs/notifications.md): the signed-in user's opt-in
 * (/api/me/notifications...) and the operators' send (POST /api/admin/notifications).
 */
import { Type } from 'typebox'
import { ADMIN_ERROR_CODES } from '../auth/admin-token.js'
import { NOTIFICATION_ERROR_CODES } from '../notifications/notification-errors.js'
import { ID_PATTERN, MAX_HEADER_CHARS, MAX_PATH_CHARS, MAX_RECIPIENTS } from '../notifications/notification-rules.js'
import { SEND_STATUSES } from '../notifications/notifications-service.js'
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

const ChannelView = Type.Object({
  channel: Type.Literal('bastyon'),
  proxy: Type.String({ description: 'The origin of the Bastyon proxy tried first: the one that last took a push for the user, or the one named at opt-in' }),
  since: Type.String({ format: 'date-time', description: 'When the user opted in (ISO 8601)' }),
})

export const NotificationChannelsSchema = {
  tags: ['notifications'],
  summary: 'The signed-in user\'s notification channels',
  description: 'Where the app can reach the user outside the mini-app: empty until the user opts in (PUT /api/me/notifications/bastyon).',
  security: signedIn,
  response: {
    200: SuccessEnvelope(Type.Object({ channels: Type.Array(ChannelView) }), { message: 'Notification channels retrieved successfully', data: { channels: [{ channel: 'bastyon', proxy: PROXY, since: '2026-11-24T10:00:00.000Z' }] } }),
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
    200: SuccessEnvelope(ChannelView, { message: 'Notifications on', data: { channel: 'bastyon', proxy: PROXY, since: '2026-11-24T10:00:00.000Z' } }),
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

const Status = Type.String({ enum: [...SEND_STATUSES] })

export const AdminSendSchema = {
  tags: ['notifications'],
  summary: 'Send a notification (operators)',
  description: 'What `app.notifications.send` does, for operators: needs `Authorization: Bearer <ADMIN_TOKEN>` (the route exists only while ADMIN_TOKEN is set). One result per address, in the order given: `sent` (pushed to the user\'s proxy), `queued` (stored, not pushed yet when the answer was written: it will be, or given up), `failed` (given up), `not_registered` (the user has not opted in), `duplicate` (the same `id` reached the user in the last 24 h), `rate_limited` (the user\'s interval or day, or the app\'s day).',
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
