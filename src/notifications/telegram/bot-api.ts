/**
 * The Telegram Bot API calls the service makes (https://core.telegram.org/bots/api): sendMessage
 * to a linked chat, setWebhook with the secret Telegram then sends back on every update, and
 * getMe, deleteWebhook and getWebhookInfo for the operator's checks. Each call is one JSON POST to
 * `<baseUrl>/bot<token>/<method>` over fetch, cut at `timeoutMs` and by the caller's AbortSignal
 * (which rejects with the signal's reason, so that the outbox puts its delivery back).
 *
 * A refusal is a BotApiError whose `kind` says what it means for the delivery (bot-api-errors.ts).
 * The token is in the URL only: it is kept in a private field, never logged and never put in an
 * error (a network error's text is reduced to its code, and no fetch error is kept as a `cause`,
 * since its URL would carry the token).
 */
import { REAL_TIMERS, type Timers } from 'pocketnet-client'
import { BotApiError, classifyRefusal, type BotApiRefusal } from './bot-api-errors.js'

export const DEFAULT_BOT_API_URL = 'https://api.telegram.org'

/** Telegram's limit on a message's text, in characters after entities are parsed. */
export const MAX_MESSAGE_LENGTH = 4096

/** What BotFather gives: the bot's numeric id, a colon, and a secret of URL-safe characters. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/
const MAX_DESCRIPTION_CHARS = 200

export interface BotApiOptions {
  /** The bot's token from BotFather. Never logged. */
  token: string
  /** Default {@link DEFAULT_BOT_API_URL}; the emulator's URL in tests and the demo, or a local Bot API server. */
  baseUrl?: string
  /** How long one call may take, answer included. Default 10000. */
  timeoutMs?: number
  timers?: Timers
}

export interface InlineButton {
  text: string
  /** http(s):// or tg:// */
  url: string
}

export interface SendMessageOptions {
  /** How Telegram reads the text's markup. Default: plain text. */
  parseMode?: 'HTML' | 'MarkdownV2'
  /** Delivered without a sound. */
  disableNotification?: boolean
  /** One button under the message that opens `url`. */
  button?: InlineButton
  /** Aborts the call: it rejects with the signal's reason. */
  signal?: AbortSignal
}

export interface SentMessage {
  messageId: number
  chatId: number
  /** Unix time in seconds, as Telegram dates messages. */
  date: number
}

export interface BotIdentity {
  id: number
  /** What `https://t.me/<username>` opens. */
  username: string
  firstName: string
}

export interface WebhookStatus {
  url: string
  pendingUpdateCount: number
  /** Unix time in seconds of the last failed delivery to the webhook. */
  lastErrorDate?: number
  lastErrorMessage?: string
}

export interface SetWebhookOptions {
  /** Forget the updates Telegram kept while no webhook answered. Default false. */
  dropPendingUpdates?: boolean
  /** The update types to receive. Default `['message']`: the links need nothing else. */
  allowedUpdates?: string[]
  signal?: AbortSignal
}

export class BotApi {
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly #token: string
  readonly #timers: Timers

  constructor (options: BotApiOptions) {
    if (typeof options.token !== 'string' || !BOT_TOKEN.test(options.token)) {
      throw new TypeError('the Telegram bot token must be what BotFather gives: digits, a colon and 20 or more of A-Z a-z 0-9 _ -')
    }
    const baseUrl = options.baseUrl ?? DEFAULT_BOT_API_URL
    let parsed: URL
    try {
      parsed = new URL(baseUrl)
    } catch {
      throw new TypeError(`the Telegram Bot API URL must be an http(s) URL, not ${JSON.stringify(baseUrl)}`)
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search !== '' || parsed.hash !== '') {
      throw new TypeError(`the Telegram Bot API URL must be an http(s) URL without a query, not ${JSON.stringify(baseUrl)}`)
    }
    const timeoutMs = options.timeoutMs ?? 10_000
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs must be a whole number of milliseconds from 1, not ${timeoutMs}`)
    this.baseUrl = parsed.href.replace(/\/+$/, '')
    this.timeoutMs = timeoutMs
    this.#token = options.token
    this.#timers = options.timers ?? REAL_TIMERS
  }

  /** The bot's own account: the operator's check that the token works, and the username deep links need. */
  async getMe (signal?: AbortSignal): Promise<BotIdentity> {
    const result = await this.#call('getMe', {}, signal) as { id?: unknown, username?: unknown, first_name?: unknown }
    if (typeof result?.id !== 'number' || typeof result.username !== 'string') throw unexpected('getMe')
    return { id: result.id, username: result.username, firstName: typeof result.first_name === 'string' ? result.first_name : '' }
  }

  /** Sends `text` to `chatId` (a linked chat's id, as the webhook gave it). */
  async sendMessage (chatId: number | string, text: string, options: SendMessageOptions = {}): Promise<SentMessage> {
    if (!(Number.isSafeInteger(chatId) || (typeof chatId === 'string' && /^-?\d{1,16}$/.test(chatId)))) throw new TypeError(`a Telegram chat id is a whole number, not ${JSON.stringify(chatId)}`)
    if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_MESSAGE_LENGTH) {
      throw new BotApiError({ kind: 'rejected', method: 'sendMessage', statusCode: null, description: `the text must have 1 to ${MAX_MESSAGE_LENGTH} characters, not ${typeof text === 'string' ? text.length : typeof text}` })
    }
    const { button } = options
    if (button !== undefined && (typeof button.text !== 'string' || button.text === '' || !isButtonUrl(button.url))) {
      throw new BotApiError({ kind: 'rejected', method: 'sendMessage', statusCode: null, description: 'a button needs a text and an http(s):// or tg:// URL' })
    }
    const result = await this.#call('sendMessage', {
      chat_id: chatId,
      text,
      ...(options.parseMode === undefined ? {} : { parse_mode: options.parseMode }),
      ...(options.disableNotification === true ? { disable_notification: true } : {}),
      ...(button === undefined ? {} : { reply_markup: { inline_keyboard: [[{ text: button.text, url: button.url }]] } }),
    }, options.signal) as { message_id?: unknown, chat?: { id?: unknown }, date?: unknown }
    if (typeof result?.message_id !== 'number' || typeof result.chat?.id !== 'number') throw unexpected('sendMessage')
    return { messageId: result.message_id, chatId: result.chat.id, date: typeof result.date === 'number' ? result.date : 0 }
  }

  /** Points the bot's updates at `url`, each sent with the header `X-Telegram-Bot-Api-Secret-Token: <secretToken>`. */
  async setWebhook (url: string, secretToken: string, options: SetWebhookOptions = {}): Promise<void> {
    if (typeof secretToken !== 'string' || !SECRET_TOKEN.test(secretToken)) throw new TypeError('a webhook secret token is 1 to 256 of A-Z a-z 0-9 _ -')
    if (!isHttpUrl(url)) throw new TypeError('the webhook URL must be an http(s) URL (Telegram itself takes https:// only, on port 443, 80, 88 or 8443)')
    await this.#call('setWebhook', {
      url,
      secret_token: secretToken,
      allowed_updates: options.allowedUpdates ?? ['message'],
      ...(options.dropPendingUpdates === true ? { drop_pending_updates: true } : {}),
    }, options.signal)
  }

  async deleteWebhook (options: { dropPendingUpdates?: boolean, signal?: AbortSignal } = {}): Promise<void> {
    await this.#call('deleteWebhook', options.dropPendingUpdates === true ? { drop_pending_updates: true } : {}, options.signal)
  }

  async getWebhookInfo (signal?: AbortSignal): Promise<WebhookStatus> {
    const result = await this.#call('getWebhookInfo', {}, signal) as { url?: unknown, pending_update_count?: unknown, last_error_date?: unknown, last_error_message?: unknown }
    if (typeof result?.url !== 'string') throw unexpected('getWebhookInfo')
    return {
      url: result.url,
      pendingUpdateCount: typeof result.pending_update_count === 'number' ? result.pending_update_count : 0,
      ...(typeof result.last_error_date === 'number' ? { lastErrorDate: result.last_error_date } : {}),
      ...(typeof result.last_error_message === 'string' ? { lastErrorMessage: result.last_error_message } : {}),
    }
  }

  /** One call: resolves with `result` on `{ok: true}`, throws a classified BotApiError otherwise. */
  async #call (method: string, params: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
    if (signal?.aborted === true) throw signal.reason
    const controller = new AbortController()
    const timedOut = new Error('timeout')
    const timeout = this.#timers.setTimeout(() => { controller.abort(timedOut) }, this.timeoutMs)
    const onAbort = (): void => { controller.abort(signal?.reason) }
    signal?.addEventListener('abort', onAbort, { once: true })
    let status: number
    let text: string
    try {
      const response = await fetch(`${this.baseUrl}/bot${this.#token}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(params),
        redirect: 'manual',
        signal: controller.signal,
      })
      status = response.status
      text = await response.text()
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason !== timedOut) throw controller.signal.reason
      const description = controller.signal.aborted ? `no answer within ${this.timeoutMs} ms` : `network error: ${networkCode(err)}`
      throw new BotApiError({ kind: 'retryAfter', method, statusCode: null, description })
    } finally {
      this.#timers.clearTimeout(timeout)
      signal?.removeEventListener('abort', onAbort)
    }
    let answer: { ok?: unknown, result?: unknown } & BotApiRefusal | undefined
    try {
      const parsed = JSON.parse(text) as unknown
      if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { ok?: unknown }).ok === 'boolean') answer = parsed as typeof answer
    } catch {}
    if (answer?.ok === true && status >= 200 && status < 300) return answer.result
    const refusal = answer === undefined ? undefined : { ...answer, description: typeof answer.description === 'string' ? this.#redact(answer.description) : answer.description }
    throw classifyRefusal(method, status, refusal)
  }

  /** Telegram never echoes the token; this keeps it so should an answer ever do it. */
  #redact (text: string): string {
    return text.split(this.#token).join('<token>').slice(0, MAX_DESCRIPTION_CHARS)
  }
}

/** fetch's "fetch failed" says nothing, and its cause's message may name the host: its code (ECONNREFUSED …) is enough. */
function networkCode (err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause
  return typeof cause?.code === 'string' && /^[A-Z_]+$/.test(cause.code) ? cause.code : 'no connection'
}

function unexpected (method: string): BotApiError {
  return new BotApiError({ kind: 'retryAfter', method, statusCode: 200, description: 'an answer without the expected result' })
}

function isHttpUrl (value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

function isButtonUrl (value: unknown): boolean {
  if (isHttpUrl(value)) return true
  try {
    return typeof value === 'string' && new URL(value).protocol === 'tg:'
  } catch {
    return false
  }
}
