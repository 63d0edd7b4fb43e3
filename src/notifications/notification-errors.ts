/**
 * What notifications refuse: a stable code for server code to match on, and the HTTP status that
 * answers it when it reaches the error handler (`{message, error, code}`).
 */
import { HttpError } from '../http/errors.js'

export const NOTIFICATION_ERROR_CODES = {
  NOTIFY_ERR_RECIPIENTS: '`to` is not an address of the network, or a list of 1 to 1000 of them.',
  NOTIFY_ERR_HEADER: '`header` is not 1 to 100 characters of text without control characters.',
  NOTIFY_ERR_PATH: '`path` is not a path inside the app: 1 to 200 printable ASCII characters starting with one `/` (not `//`), without spaces or backslashes.',
  NOTIFY_ERR_ID: '`id` is not 1 to 128 characters, each a letter, a digit, `.`, `_`, `:` or `-`.',
  NOTIFY_ERR_PROXY_NOT_ALLOWED: 'The proxy is not an origin of `NOTIFY_BASTYON_PROXIES`: the service sends only to the proxies it was configured with.',
} as const

export type NotificationErrorCode = keyof typeof NOTIFICATION_ERROR_CODES

const TITLES: Record<NotificationErrorCode, string> = {
  NOTIFY_ERR_RECIPIENTS: 'Invalid notification',
  NOTIFY_ERR_HEADER: 'Invalid notification',
  NOTIFY_ERR_PATH: 'Invalid notification',
  NOTIFY_ERR_ID: 'Invalid notification',
  NOTIFY_ERR_PROXY_NOT_ALLOWED: 'Proxy not allowed',
}

/**
 * A refusal of bad input, with its HTTP answer built in: thrown from a route (ours or the app's
 * own, calling `app.notifications`), it answers 400 with `{message, error, code}`. Match on `err.code`.
 */
export class NotificationError extends HttpError {
  override readonly code: NotificationErrorCode

  constructor (code: NotificationErrorCode, detail: string) {
    super(400, TITLES[code], detail)
    this.name = 'NotificationError'
    this.code = code
  }
}
