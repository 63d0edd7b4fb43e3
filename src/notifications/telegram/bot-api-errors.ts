/**
 * What a failed Bot API call means for a delivery, so that the outbox can act on it without
 * reading Telegram's texts (docs/notifications.md, "Telegram", "What each Bot API error means"):
 *
 * - `unreachable`: the chat cannot be written to now or later (403: the user blocked the bot, the
 *   account was deleted, the bot never talked with them; 400: chat not found). Drop the link; no retry.
 * - `retryAfter`: try again later (429 flood control, with Telegram's `retry_after` as
 *   `retryAfterMs`; 5xx, a network error, a timeout, an answer that is not the Bot API's, without).
 *   A timed-out sendMessage may have been delivered: a retry can show the message twice.
 * - `invalid`: the bot's token is wrong or revoked (401, 404): an operator's problem, no message goes
 *   out until it is fixed. Retrying this delivery cannot help, but dropping the link would be wrong.
 * - `rejected`: Telegram refused this message itself (another 400: bad HTML, too long, a bad button
 *   URL). Give this delivery up and keep the link; our text is at fault.
 *
 * Messages hold Telegram's own `description` (which never holds the token) and never the bot token
 * or the request's URL.
 */
import { CodedError } from 'pocketnet-client'

export type BotApiFailureKind = 'unreachable' | 'retryAfter' | 'invalid' | 'rejected'

export const BOT_API_ERROR_CODES = {
  TELEGRAM_UNREACHABLE: 'the chat cannot be written to (blocked, deleted, never started, not found): drop the link',
  TELEGRAM_RETRY_AFTER: 'flood control, a Telegram server error, the network or a timeout: try again later',
  TELEGRAM_INVALID_TOKEN: 'the bot token is wrong or revoked: an operator must fix the bot token',
  TELEGRAM_REJECTED: 'Telegram refused this message (its text, its format or its button): give it up',
} as const

export type BotApiErrorCode = keyof typeof BOT_API_ERROR_CODES

const CODE_OF_KIND: Readonly<Record<BotApiFailureKind, BotApiErrorCode>> = {
  unreachable: 'TELEGRAM_UNREACHABLE',
  retryAfter: 'TELEGRAM_RETRY_AFTER',
  invalid: 'TELEGRAM_INVALID_TOKEN',
  rejected: 'TELEGRAM_REJECTED',
}

export interface BotApiErrorDetail {
  kind: BotApiFailureKind
  /** The Bot API method called (`sendMessage`). */
  method: string
  /** The HTTP status, or null when no answer came. */
  statusCode: number | null
  /** Telegram's `description`, or what happened on our side ("no answer within 10000 ms"). */
  description: string
  /** With `retryAfter` from a 429: Telegram's `retry_after`, in milliseconds. */
  retryAfterMs?: number
}

export class BotApiError extends CodedError<BotApiErrorCode> {
  readonly kind: BotApiFailureKind
  readonly method: string
  readonly statusCode: number | null
  readonly description: string
  readonly retryAfterMs: number | undefined

  constructor (detail: BotApiErrorDetail, options?: ErrorOptions) {
    const status = detail.statusCode === null ? 'no answer' : `HTTP ${detail.statusCode}`
    super(CODE_OF_KIND[detail.kind], `Telegram ${detail.method}: ${status}: ${detail.description}`, options)
    this.name = 'BotApiError'
    this.kind = detail.kind
    this.method = detail.method
    this.statusCode = detail.statusCode
    this.description = detail.description
    this.retryAfterMs = detail.retryAfterMs
  }
}

/** The Bot API's answer to a failed call: `{ok: false, error_code, description, parameters?}`. */
export interface BotApiRefusal {
  error_code?: unknown
  description?: unknown
  parameters?: { retry_after?: unknown, migrate_to_chat_id?: unknown }
}

/** Telegram's descriptions of a 400 that mean the chat is gone, rather than that the message is wrong. */
const CHAT_GONE = /chat not found|user not found|PEER_ID_INVALID|user is deactivated|bot was blocked|chat was deleted|group chat was (upgraded|deactivated)/i

/** What `status` and the refusal's body mean for a delivery. */
export function classifyRefusal (method: string, status: number, refusal: BotApiRefusal | undefined): BotApiError {
  const description = typeof refusal?.description === 'string' ? refusal.description : `HTTP ${status} without the Bot API's envelope`
  const detail = { method, statusCode: status, description }
  if (status === 429) {
    const seconds = refusal?.parameters?.retry_after
    return new BotApiError({ ...detail, kind: 'retryAfter', ...(typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: Math.ceil(seconds * 1000) } : {}) })
  }
  if (status >= 500 || refusal === undefined) return new BotApiError({ ...detail, kind: 'retryAfter' })
  if (status === 401 || status === 404) return new BotApiError({ ...detail, kind: 'invalid' })
  if (status === 403) return new BotApiError({ ...detail, kind: 'unreachable' })
  if (status === 400 && (CHAT_GONE.test(description) || refusal.parameters?.migrate_to_chat_id !== undefined)) return new BotApiError({ ...detail, kind: 'unreachable' })
  // Another 400, a 409 (getUpdates beside a webhook), the rest: nothing says it would pass later.
  return new BotApiError({ ...detail, kind: 'rejected' })
}
