/**
 * The Telegram channel of the notifications (docs/notifications.md, "Telegram"): the app's bot,
 * the link tokens a signed-in user opens as a deep link, the webhook's secret, what a delivery
 * sends, and what each Bot API failure means for it. The database's part (the nonces, the channel
 * rows, the outbox) is notification-store.ts's; the service (notifications-service.ts) joins them.
 *
 * A delivery is one sendMessage: the notification's header as plain text, with one button that
 * opens the mini-app at the notification's path (app-link.ts). Its failures, by kind
 * (bot-api-errors.ts):
 *
 *   unreachable → given up at once; the service drops the chat's link (the user blocked the bot)
 *   retryAfter  → retried after the policy's delay, and not before Telegram's retry_after
 *   invalid     → retried on the policy's backoff (the bot's token is the operator's to fix)
 *   rejected    → given up at once (the message itself is at fault); the link stays
 */
import type { Timers } from 'pocketnet-client'
import type { RetryDecision, RetryPolicy } from '../../outbox/retry-policy.js'
import { appLink } from '../app-link.js'
import type { DeliveryRow } from '../notification-store.js'
import { BotApiError } from './bot-api-errors.js'
import { BotApi } from './bot-api.js'
import { deepLink, LinkTokens, type LinkTokenRefusal } from './link-token.js'
import { readWebhookUpdate, webhookSecretFor, type WebhookRequest, type WebhookUpdate } from './webhook-update.js'

/** What the button under a notification says. */
export const OPEN_BUTTON_TEXT = 'Open'

export interface TelegramChannelOptions {
  /** The mini-app's id (BASTYON_APP_ID): the button opens it, and the bot's replies name it. */
  appId: string
  /** TELEGRAM_BOT_TOKEN. Never logged; also the link tokens' secret. */
  botToken: string
  /** TELEGRAM_BOT_USERNAME: what the deep links open. */
  botUsername: string
  /** TELEGRAM_API_URL. Default https://api.telegram.org. */
  apiUrl?: string
  /** TELEGRAM_WEBHOOK_SECRET. Default: made from the token (webhookSecretFor). */
  webhookSecret?: string
  /** How long one Bot API call may take. Default 10 s. */
  timeoutMs?: number
  /** How long a link may wait to be opened. Default 10 minutes. */
  linkTtlMs?: number
  timers?: Timers
}

/** A deep link for the signed-in user: `https://t.me/<bot>?start=<token>`, and when it stops working. */
export interface TelegramLink {
  link: string
  /** ISO 8601. */
  expiresAt: string
}

export class TelegramChannel {
  readonly bot: BotApi
  readonly botUsername: string
  readonly appId: string
  readonly #webhookSecret: string
  readonly #tokens: LinkTokens

  constructor (options: TelegramChannelOptions) {
    this.bot = new BotApi({ token: options.botToken, ...(options.apiUrl === undefined ? {} : { baseUrl: options.apiUrl }), ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), ...(options.timers === undefined ? {} : { timers: options.timers }) })
    this.botUsername = options.botUsername.replace(/^@/, '')
    this.appId = options.appId
    this.#webhookSecret = options.webhookSecret === undefined || options.webhookSecret === '' ? webhookSecretFor(options.botToken) : options.webhookSecret
    this.#tokens = new LinkTokens({ secret: options.botToken, ...(options.linkTtlMs === undefined ? {} : { ttlMs: options.linkTtlMs }) })
  }

  /** A fresh deep link that links the chat it is opened in to `address`, valid from `now` (epoch ms). */
  link (address: string, now: number): TelegramLink {
    const issued = this.#tokens.issue(address, now)
    return { link: deepLink(this.botUsername, issued.token), expiresAt: new Date(issued.expiresAt).toISOString() }
  }

  /** Whose address a `/start` token names (not yet whether it was used: the store's). */
  verify (token: string, now: number): ReturnType<LinkTokens['verify']> {
    return this.#tokens.verify(token, now)
  }

  /** Whether a webhook request is Telegram's (its secret header, compared in constant time), and what it says. */
  read (request: WebhookRequest): WebhookUpdate {
    return readWebhookUpdate(request, this.#webhookSecret)
  }

  /** Why the request's secret header is refused, or undefined when it is the webhook's: checked before the body is read. */
  refusal (headers: WebhookRequest['headers']): 'missing_secret' | 'wrong_secret' | undefined {
    const update = readWebhookUpdate({ headers, body: undefined }, this.#webhookSecret)
    return update.kind === 'unauthorized' ? update.reason : undefined
  }

  /** Points the bot's updates at `url` with this channel's secret. */
  async setWebhook (url: string, signal?: AbortSignal): Promise<void> {
    await this.bot.setWebhook(url, this.#webhookSecret, signal === undefined ? {} : { signal })
  }

  /** Sends the delivery to its chat; throws a BotApiError when Telegram refused it, the shutdown's reason when `shutdown` aborted it. */
  async deliver (row: DeliveryRow, shutdown: AbortSignal): Promise<void> {
    await this.bot.sendMessage(row.target, row.header, { button: { text: OPEN_BUTTON_TEXT, url: appLink(this.appId, row.path) }, signal: shutdown })
  }

  /** The bot's answer to a `/start` that linked the chat. */
  linkedText (): string {
    return `Linked: you will get ${this.appId}'s notifications here.`
  }

  /** The bot's answer to a `/start` whose token links nothing. */
  refusedText (reason: LinkTokenRefusal | 'used'): string {
    const why = reason === 'expired' ? 'This link has expired.' : reason === 'used' ? 'This link was used already.' : 'This link is not one of ours.'
    return `${why} Ask ${this.appId} for a new one to get its notifications here.`
  }

  /** The bot's answer to any other message. */
  howToLinkText (): string {
    return `To get ${this.appId}'s notifications here, open the Telegram link the app gives you when you turn them on.`
  }
}

/** Whether a failed delivery is tried again, and when (see the table above). */
export function telegramRetryDecision (error: unknown, attempts: number, retry: RetryPolicy): RetryDecision {
  if (!(error instanceof BotApiError)) return retry.afterFailure(attempts)
  if (error.kind === 'unreachable' || error.kind === 'rejected') return { giveUp: true }
  const decision = retry.afterFailure(attempts)
  if (decision.giveUp || error.retryAfterMs === undefined) return decision
  return { giveUp: false, retryInMs: Math.max(decision.retryInMs, error.retryAfterMs) }
}
