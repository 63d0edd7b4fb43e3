/**
 * The webhook's refusal (POST /api/telegram/webhook): a request without Telegram's secret header,
 * or with another secret, is a 401 with a stable code, before its body is read.
 */
import { HttpError } from '../../http/errors.js'

export const TELEGRAM_WEBHOOK_ERROR_CODES = {
  TELEGRAM_SECRET_MISSING: 'The request carries no X-Telegram-Bot-Api-Secret-Token header (or an empty one, or two).',
  TELEGRAM_SECRET_INVALID: 'The X-Telegram-Bot-Api-Secret-Token header is not the webhook\'s secret.',
} as const

export type TelegramWebhookErrorCode = keyof typeof TELEGRAM_WEBHOOK_ERROR_CODES

export class TelegramWebhookError extends HttpError {
  override readonly code: TelegramWebhookErrorCode

  constructor (reason: 'missing_secret' | 'wrong_secret') {
    const code = reason === 'missing_secret' ? 'TELEGRAM_SECRET_MISSING' : 'TELEGRAM_SECRET_INVALID'
    super(401, 'Unauthorized', reason === 'missing_secret' ? 'This route takes Telegram\'s updates, with the webhook\'s secret header' : 'The secret header is not the webhook\'s secret')
    this.name = 'TelegramWebhookError'
    this.code = code
  }
}
