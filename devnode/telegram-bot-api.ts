/**
 * An offline Telegram Bot API, the subset a mini-app's back-end uses to reach a user in Telegram,
 * written from Telegram's documentation (https://core.telegram.org/bots/api). For tests and the
 * demo, on loopback; it shares no code with src/ (a client checked against its own encoding would
 * hide its own bugs).
 *
 * Methods, under `/bot<token>/<method>` (the method's name in any case, as Telegram reads it),
 * their parameters the query string and the body merged: a JSON body, a form
 * (`application/x-www-form-urlencoded`) or `multipart/form-data`, in which objects such as
 * `reply_markup` are JSON-serialized strings:
 * - `getMe` → the bot (a User with `is_bot: true`).
 * - `sendMessage {chat_id, text, parse_mode?, disable_notification?, reply_markup?}` → the Message.
 *   Refused as Telegram refuses it: a chat no user opened with the bot is 400 `Bad Request: chat
 *   not found`, a user who blocked the bot 403 `Forbidden: bot was blocked by the user`, a
 *   deleted account 403 `Forbidden: user is deactivated`, an empty text 400 `Bad Request: message
 *   text is empty`, above 4096 characters 400 `Bad Request: message is too long`, HTML that does
 *   not parse 400 `Bad Request: can't parse entities: …`, an inline keyboard button without an
 *   http(s) or tg URL 400 `Bad Request: BUTTON_URL_INVALID`.
 * - `setWebhook {url, secret_token?, allowed_updates?, drop_pending_updates?, max_connections?}`,
 *   `deleteWebhook {drop_pending_updates?}`, `getWebhookInfo`. Unlike Telegram, an http:// URL
 *   on any port is taken (the tests' servers listen on loopback without TLS), unless `requireHttps`.
 * Every answer is `{ok: true, result}` (setWebhook and deleteWebhook add a `description`), or
 * `{ok: false, error_code, description, parameters?: {retry_after}}` with the HTTP status
 * `error_code`: 401 `Unauthorized` for another token, 404 `Not Found` for another method.
 *
 * A user's message is an Update POSTed to the webhook as Telegram posts it: JSON `{update_id,
 * message: {message_id, from, chat: {id, type: 'private', …}, date, text, entities?}}` with the
 * header `X-Telegram-Bot-Api-Secret-Token` when setWebhook was given a `secret_token`, one update
 * at a time in order; an answer other than 2xx (or none within `webhookTimeoutMs`) is tried again,
 * after `webhookRetryDelayMs`, doubling, up to `webhookAttempts` attempts, then dropped, and the
 * error shows in getWebhookInfo's `last_error_message` as Telegram shows it. Updates written while
 * no webhook is set wait for one (`pending_update_count`).
 *
 * Controls under `/__telegram/` (loopback clients that are no browser, as the node's controls),
 * JSON in and out, and the same as methods of the object `startTelegramBotApi` returns:
 * - `POST /__telegram/updates {chat_id, text, first_name?, username?, chat_type?}`: the user
 *   writes to the bot (`/start <payload>` is what Telegram sends for a deep link); answers once the
 *   update is delivered or dropped (`{update_id, delivered, attempts}`), or at once with 202
 *   `{update_id, pending: true}` while no webhook is set.
 * - `GET /__telegram/chats/<chat_id>/messages`: what the bot sent to that chat.
 * - `POST /__telegram/chats/<chat_id>/block` and `/unblock`: the user blocks the bot (every
 *   sendMessage to them is then 403) or unblocks it.
 * - `POST /__telegram/faults {fault, count, retry_after?}`: the next `count` sendMessage calls
 *   fail: `too-many-requests` (429 `Too Many Requests: retry after N`, `parameters.retry_after`
 *   N seconds, default 3), `internal-error` (500 `Internal Server Error`), `blocked` (403) or
 *   `hang` (no answer until the emulator closes). `DELETE /__telegram/faults` clears them.
 * - `GET /__telegram/webhook`: the webhook as getWebhookInfo answers it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { isLoopback } from './controls.js'

/** Where the emulator's controls live: `<url>/__telegram/…`. */
export const TELEGRAM_CONTROLS_PATH = '/__telegram'

/** A token in Telegram's shape (`<bot id>:<35 characters>`), the same every run; made up, it works nowhere else. */
export const EMULATOR_BOT_TOKEN = '7000000001:AAE-emulatorTokenForTestsOnly_000000'

export type TelegramFault = 'too-many-requests' | 'internal-error' | 'blocked' | 'hang'
const FAULTS: readonly TelegramFault[] = ['too-many-requests', 'internal-error', 'blocked', 'hang']

export type ChatType = 'private' | 'group' | 'supergroup'

/** A Telegram User object, as the Bot API spells it. */
export interface TelegramUser {
  id: number
  is_bot: boolean
  first_name: string
  username?: string
  language_code?: string
}

export interface TelegramChat {
  id: number
  type: ChatType
  first_name?: string
  username?: string
  title?: string
}

export interface InlineKeyboardButton {
  text: string
  url?: string
  callback_data?: string
}

/** A Telegram Message object, the fields this emulator fills. */
export interface TelegramMessage {
  message_id: number
  from?: TelegramUser
  chat: TelegramChat
  /** Unix time in seconds. */
  date: number
  text?: string
  entities?: Array<{ type: string, offset: number, length: number }>
  reply_markup?: { inline_keyboard: InlineKeyboardButton[][] }
}

export interface TelegramUpdate {
  update_id: number
  message?: TelegramMessage
}

/** What the bot sent to a chat, with the options that are not part of the Message. */
export interface SentMessage {
  message: TelegramMessage
  parseMode?: string
  disableNotification: boolean
}

export interface WebhookAttempt {
  /** The webhook's HTTP status, or null when it did not answer (refused, reset, timed out). */
  status: number | null
  /** Why it failed, as getWebhookInfo words it. */
  error?: string
}

/** What became of one update. */
export interface WebhookDelivery {
  update: TelegramUpdate
  delivered: boolean
  /** True when no webhook was set: the update waits for one (getWebhookInfo's `pending_update_count`). */
  pending: boolean
  attempts: WebhookAttempt[]
}

/** getWebhookInfo's result. */
export interface WebhookInfo {
  url: string
  has_custom_certificate: boolean
  pending_update_count: number
  max_connections?: number
  allowed_updates?: string[]
  last_error_date?: number
  last_error_message?: string
}

export interface UserMessage {
  /** The chat: the user's own id for a private chat, a negative id for a group. */
  chatId: number
  text: string
  /** The user's first name. Default `User <chatId>`. */
  firstName?: string
  username?: string
  /** Default `private`. In a group, the user's id is `userId` (default 1000). */
  chatType?: ChatType
  userId?: number
}

export interface TelegramBotApiOptions {
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0: a free port. */
  port?: number
  /** The bot's token: requests under another answer 401. Default {@link EMULATOR_BOT_TOKEN}. */
  token?: string
  /** The bot's username (what `https://t.me/<username>` opens). Default `emulator_test_bot`. */
  username?: string
  /** The bot's first name. Default `Emulator Bot`. */
  firstName?: string
  /** Attempts at delivering one update before it is dropped. Default 5. */
  webhookAttempts?: number
  /** The wait after the first failed attempt, doubling after each. Default 1000; 0 in tests. */
  webhookRetryDelayMs?: number
  /** How long the webhook may take to answer one attempt. Default 10000. */
  webhookTimeoutMs?: number
  /** Refuse webhooks that are not https:// on 443, 80, 88 or 8443, as Telegram does. Default false. */
  requireHttps?: boolean
  /** Milliseconds since the epoch, for messages' `date`. Default Date.now. */
  now?: () => number
  /** The controls over HTTP: default on, loopback clients only (`{ remote: true }`: any client). */
  controls?: boolean | { remote?: boolean }
}

export interface TelegramBotApi {
  /** The Bot API's base URL, e.g. http://127.0.0.1:40125: what a client takes in place of https://api.telegram.org. */
  readonly url: string
  readonly token: string
  /** The bot, as getMe answers it. */
  readonly bot: TelegramUser & { username: string }
  /** The webhook set now: its URL ('' when none) and secret token. */
  readonly webhook: { url: string, secretToken?: string }
  /**
   * The user writes to the bot: resolves once the update is delivered or dropped, or at once with
   * `pending: true` while no webhook is set (it is delivered once one is: {@link delivered}).
   */
  userWrites (message: UserMessage): Promise<WebhookDelivery>
  /** Resolves once no update waits for a webhook that is set (those kept while none is set stay). */
  delivered (): Promise<void>
  /** What the bot sent to `chatId`, oldest first. */
  sentMessages (chatId: number): SentMessage[]
  /** Every sendMessage call the emulator answered or held, refused ones and faults included. */
  readonly sendMessageCalls: number
  /** The user of a private chat blocks the bot, or deletes their account (`deactivated`). */
  block (chatId: number, how?: 'blocked' | 'deactivated'): void
  unblock (chatId: number): void
  /** The next `count` sendMessage calls fail as `fault` says. */
  fault (fault: TelegramFault, count?: number, options?: { retryAfterS?: number }): void
  clearFaults (): void
  /** Stops: held calls and updates waiting are let go, the port closed. Calling it again does nothing more. */
  close (): Promise<void>
}

/** A refusal, as the Bot API answers one. */
class BotApiRefusal extends Error {
  constructor (readonly errorCode: number, readonly description: string, readonly parameters?: { retry_after: number }) {
    super(description)
  }
}

const badRequest = (what: string): BotApiRefusal => new BotApiRefusal(400, `Bad Request: ${what}`)

class ControlRefusal extends Error {
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

const MAX_BODY_BYTES = 1024 * 1024
const MAX_TEXT_LENGTH = 4096
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/
const WEBHOOK_PORTS = new Set(['443', '80', '88', '8443', ''])
const HTML_TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'a', 'code', 'pre', 'tg-spoiler', 'span', 'blockquote', 'tg-emoji'])
const PARSE_MODES = new Set(['html', 'markdown', 'markdownv2'])

type Params = Record<string, unknown>

interface ChatState {
  chat: TelegramChat
  nextMessageId: number
  sent: SentMessage[]
  blocked?: 'blocked' | 'deactivated'
}

interface PendingUpdate {
  update: TelegramUpdate
  settle: (delivery: WebhookDelivery) => void
  attempts: WebhookAttempt[]
}

interface Fault { fault: TelegramFault, remaining: number, retryAfterS: number }

export async function startTelegramBotApi (options: TelegramBotApiOptions = {}): Promise<TelegramBotApi> {
  const token = options.token ?? EMULATOR_BOT_TOKEN
  const botId = Number(token.split(':')[0])
  const bot = {
    id: Number.isSafeInteger(botId) && botId > 0 ? botId : 7000000001,
    is_bot: true,
    first_name: options.firstName ?? 'Emulator Bot',
    username: options.username ?? 'emulator_test_bot',
  }
  const now = options.now ?? Date.now
  const attemptsAllowed = options.webhookAttempts ?? 5
  const firstRetryDelayMs = options.webhookRetryDelayMs ?? 1000
  const webhookTimeoutMs = options.webhookTimeoutMs ?? 10_000
  const controls = options.controls ?? true
  const remoteControls = typeof controls === 'object' && controls.remote === true
  if (!Number.isInteger(attemptsAllowed) || attemptsAllowed < 1) throw new RangeError(`webhookAttempts is a whole number from 1, not ${attemptsAllowed}`)

  const chats = new Map<number, ChatState>()
  const faults: Fault[] = []
  const queue: PendingUpdate[] = []
  const held = new Set<() => void>()
  const closing = new AbortController()
  let webhook: { url: string, secretToken?: string, maxConnections: number, allowedUpdates?: string[] } = { url: '', maxConnections: 40 }
  let lastError: { date: number, message: string } | undefined
  let nextUpdateId = 100_000_001
  let sendMessageCalls = 0
  let delivering = false
  let deliveries: Promise<void> = Promise.resolve()
  let closed: Promise<void> | undefined

  const seconds = (): number => Math.floor(now() / 1000)

  function chatOf (message: UserMessage): ChatState {
    const type = message.chatType ?? 'private'
    let state = chats.get(message.chatId)
    if (state === undefined) {
      const chat: TelegramChat = type === 'private'
        ? { id: message.chatId, type, first_name: message.firstName ?? `User ${message.chatId}`, ...(message.username === undefined ? {} : { username: message.username }) }
        : { id: message.chatId, type, title: `Group ${message.chatId}` }
      state = { chat, nextMessageId: 1, sent: [] }
      chats.set(message.chatId, state)
    }
    return state
  }

  // --- Methods -----------------------------------------------------------------------------

  function getMe (): unknown {
    return { ...bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false, can_connect_to_business: false, has_main_web_app: false }
  }

  async function sendMessage (params: Params): Promise<unknown> {
    sendMessageCalls++
    const fault = faults[0]
    if (fault !== undefined) {
      if (--fault.remaining <= 0) faults.shift()
      switch (fault.fault) {
        case 'too-many-requests':
          throw new BotApiRefusal(429, `Too Many Requests: retry after ${fault.retryAfterS}`, { retry_after: fault.retryAfterS })
        case 'internal-error':
          throw new BotApiRefusal(500, 'Internal Server Error')
        case 'blocked':
          throw new BotApiRefusal(403, 'Forbidden: bot was blocked by the user')
        case 'hang':
          await new Promise<void>(resolve => { held.add(resolve) })
          throw new BotApiRefusal(500, 'Internal Server Error')
      }
    }
    if (params.chat_id === undefined || params.chat_id === '') throw badRequest('chat_id is empty')
    const chatId = integerParam(params.chat_id)
    const state = chatId === undefined ? undefined : chats.get(chatId)
    if (state === undefined) throw badRequest('chat not found')
    const text = params.text === undefined ? '' : String(params.text)
    if (text.trim() === '') throw badRequest('message text is empty')
    if (text.length > MAX_TEXT_LENGTH) throw badRequest('message is too long')
    const parseMode = params.parse_mode === undefined || params.parse_mode === '' ? undefined : String(params.parse_mode)
    if (parseMode !== undefined && !PARSE_MODES.has(parseMode.toLowerCase())) throw badRequest(`unsupported parse_mode "${parseMode}"`)
    if (parseMode?.toLowerCase() === 'html') checkHtml(text)
    const replyMarkup = params.reply_markup === undefined ? undefined : inlineKeyboard(params.reply_markup)
    if (state.blocked === 'blocked') throw new BotApiRefusal(403, 'Forbidden: bot was blocked by the user')
    if (state.blocked === 'deactivated') throw new BotApiRefusal(403, 'Forbidden: user is deactivated')
    const message: TelegramMessage = {
      message_id: state.nextMessageId++,
      from: { id: bot.id, is_bot: true, first_name: bot.first_name, username: bot.username },
      chat: state.chat,
      date: seconds(),
      text: parseMode?.toLowerCase() === 'html' ? htmlText(text) : text,
      ...(replyMarkup === undefined ? {} : { reply_markup: replyMarkup }),
    }
    state.sent.push({ message, ...(parseMode === undefined ? {} : { parseMode }), disableNotification: booleanParam(params.disable_notification) })
    return message
  }

  function setWebhook (params: Params): { result: true, description: string } {
    const url = params.url === undefined ? '' : String(params.url)
    if (url !== '') {
      let parsed: URL
      try {
        parsed = new URL(url)
      } catch {
        throw badRequest('bad webhook: Failed to resolve host: Name or service not known')
      }
      if (options.requireHttps === true && (parsed.protocol !== 'https:' || !WEBHOOK_PORTS.has(parsed.port))) {
        throw badRequest(parsed.protocol === 'https:' ? 'bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443' : 'bad webhook: An HTTPS URL must be provided for webhook')
      }
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw badRequest('bad webhook: An HTTPS URL must be provided for webhook')
    }
    const secretToken = params.secret_token === undefined || params.secret_token === '' ? undefined : String(params.secret_token)
    if (secretToken !== undefined && !SECRET_TOKEN.test(secretToken)) throw badRequest('secret token contains unallowed characters')
    const maxConnections = params.max_connections === undefined ? 40 : integerParam(params.max_connections)
    if (maxConnections === undefined || maxConnections < 1 || maxConnections > 100) throw badRequest('bad max_connections')
    const allowedUpdates = params.allowed_updates === undefined ? webhook.allowedUpdates : stringList(params.allowed_updates, 'allowed_updates')
    if (booleanParam(params.drop_pending_updates)) dropPending()
    const unchanged = url === webhook.url && secretToken === webhook.secretToken
    webhook = { url, maxConnections, ...(secretToken === undefined ? {} : { secretToken }), ...(allowedUpdates === undefined ? {} : { allowedUpdates }) }
    if (url === '') return { result: true, description: 'Webhook was deleted' }
    lastError = undefined
    deliverInBackground()
    return { result: true, description: unchanged ? 'Webhook is already set' : 'Webhook was set' }
  }

  function deleteWebhook (params: Params): { result: true, description: string } {
    if (booleanParam(params.drop_pending_updates)) dropPending()
    const wasSet = webhook.url !== ''
    webhook = { url: '', maxConnections: 40 }
    return { result: true, description: wasSet ? 'Webhook was deleted' : 'Webhook is already deleted' }
  }

  function webhookInfo (): WebhookInfo {
    return {
      url: webhook.url,
      has_custom_certificate: false,
      pending_update_count: queue.length,
      ...(webhook.url === '' ? {} : { max_connections: webhook.maxConnections }),
      ...(webhook.allowedUpdates === undefined ? {} : { allowed_updates: webhook.allowedUpdates }),
      ...(lastError === undefined ? {} : { last_error_date: lastError.date, last_error_message: lastError.message }),
    }
  }

  const METHODS: Record<string, (params: Params) => unknown> = {
    getme: getMe,
    sendmessage: sendMessage,
    setwebhook: setWebhook,
    deletewebhook: deleteWebhook,
    getwebhookinfo: webhookInfo,
  }

  // --- Updates -----------------------------------------------------------------------------

  function userWrites (input: UserMessage): Promise<WebhookDelivery> {
    if (!Number.isSafeInteger(input.chatId) || input.chatId === 0) throw new RangeError(`a chat id is a non-zero whole number, not ${input.chatId}`)
    if (typeof input.text !== 'string' || input.text === '') throw new TypeError('a user writes a non-empty text')
    if ((input.chatType ?? 'private') === 'private' && input.chatId < 0) throw new RangeError('a private chat\'s id is the user\'s, above 0')
    const state = chatOf(input)
    const userId = state.chat.type === 'private' ? input.chatId : (input.userId ?? 1000)
    const from: TelegramUser = { id: userId, is_bot: false, first_name: input.firstName ?? `User ${userId}`, ...(input.username === undefined ? {} : { username: input.username }), language_code: 'en' }
    const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(input.text)
    const update: TelegramUpdate = {
      update_id: nextUpdateId++,
      message: {
        message_id: state.nextMessageId++,
        from,
        chat: state.chat,
        date: seconds(),
        text: input.text,
        ...(command === null ? {} : { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] }),
      },
    }
    if (webhook.url === '') {
      queue.push({ update, settle: () => {}, attempts: [] })
      return Promise.resolve({ update, delivered: false, pending: true, attempts: [] })
    }
    return new Promise(resolve => {
      queue.push({ update, settle: resolve, attempts: [] })
      deliverInBackground()
    })
  }

  function dropPending (): void {
    for (const pending of queue.splice(0)) pending.settle({ update: pending.update, delivered: false, pending: false, attempts: pending.attempts })
  }

  function deliverInBackground (): void {
    if (delivering) return
    // Nothing in a delivery rejects: each attempt's failure is an outcome.
    deliveries = deliverQueued().catch(() => {})
  }

  /** Delivers the queue's updates one at a time, in order, while a webhook is set. */
  async function deliverQueued (): Promise<void> {
    if (delivering) return
    delivering = true
    try {
      while (!closing.signal.aborted && webhook.url !== '' && queue.length > 0) {
        const pending = queue[0] as PendingUpdate
        const outcome = await attempt(pending.update)
        if (queue[0] !== pending) continue
        if (outcome === 'skipped') {
          queue.shift()
          pending.settle({ update: pending.update, delivered: false, pending: false, attempts: pending.attempts })
          continue
        }
        pending.attempts.push(outcome)
        if (outcome.error === undefined) {
          queue.shift()
          pending.settle({ update: pending.update, delivered: true, pending: false, attempts: pending.attempts })
          continue
        }
        lastError = { date: seconds(), message: outcome.error }
        if (pending.attempts.length >= attemptsAllowed) {
          queue.shift()
          pending.settle({ update: pending.update, delivered: false, pending: false, attempts: pending.attempts })
          continue
        }
        await sleep(firstRetryDelayMs * 2 ** (pending.attempts.length - 1), undefined, { signal: closing.signal }).catch(() => {})
      }
    } finally {
      delivering = false
    }
    if (!closing.signal.aborted && webhook.url !== '' && queue.length > 0) deliverInBackground()
  }

  /** One POST of `update` to the webhook, or 'skipped' when the webhook asked for no messages. */
  async function attempt (update: TelegramUpdate): Promise<WebhookAttempt | 'skipped'> {
    const allowed = webhook.allowedUpdates
    if (allowed !== undefined && allowed.length > 0 && !allowed.includes('message')) return 'skipped'
    const signal = AbortSignal.any([closing.signal, AbortSignal.timeout(webhookTimeoutMs)])
    try {
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(webhook.secretToken === undefined ? {} : { 'x-telegram-bot-api-secret-token': webhook.secretToken }) },
        body: JSON.stringify(update),
        redirect: 'manual',
        signal,
      })
      await response.arrayBuffer().catch(() => {})
      if (response.status >= 200 && response.status < 300) return { status: response.status }
      return { status: response.status, error: `Wrong response from the webhook: ${response.status} ${response.statusText}`.trim() }
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError'
      const cause = networkCause(err)
      return { status: null, error: timedOut ? 'Read timeout expired' : cause === 'ECONNREFUSED' ? 'Connection refused' : `Connection failed (${cause})` }
    }
  }

  // --- HTTP --------------------------------------------------------------------------------

  async function answerMethod (request: IncomingMessage, path: string): Promise<{ status: number, body: unknown }> {
    const match = /^\/bot([^/]*)\/([A-Za-z]+)$/.exec(path)
    if (match === null) return refusal(new BotApiRefusal(404, 'Not Found'))
    if (match[1] !== token) return refusal(new BotApiRefusal(401, 'Unauthorized'))
    const method = METHODS[(match[2] as string).toLowerCase()]
    if (method === undefined) return refusal(new BotApiRefusal(404, 'Not Found'))
    try {
      const answer = await method(await paramsOf(request))
      if (typeof answer === 'object' && answer !== null && 'description' in answer && 'result' in answer) return { status: 200, body: { ok: true, ...answer } }
      return { status: 200, body: { ok: true, result: answer } }
    } catch (err) {
      if (err instanceof BotApiRefusal) return refusal(err)
      throw err
    }
  }

  async function answerControl (request: IncomingMessage, path: string): Promise<{ status: number, body: unknown }> {
    if (!remoteControls && !isLoopback(request.socket.remoteAddress)) throw new ControlRefusal(403, 'LOOPBACK_ONLY', 'the emulator\'s controls answer this machine only')
    if (request.headers.origin !== undefined) throw new ControlRefusal(403, 'BROWSER_REFUSED', 'the emulator\'s controls answer no browser: call them from a program or curl')
    const rest = path.slice(TELEGRAM_CONTROLS_PATH.length)
    const method = request.method ?? 'GET'
    const chat = /^\/chats\/(-?\d+)\/(messages|block|unblock)$/.exec(rest)
    if (rest === '/updates' && method === 'POST') {
      const body = await controlBody(request)
      const message = userMessageOf(body)
      const delivery = await userWrites(message)
      if (delivery.pending) return { status: 202, body: { update_id: delivery.update.update_id, pending: true } }
      return { status: 200, body: { update_id: delivery.update.update_id, delivered: delivery.delivered, attempts: delivery.attempts } }
    }
    if (chat !== null) {
      const chatId = Number(chat[1])
      if (chat[2] === 'messages' && method === 'GET') return { status: 200, body: { messages: api.sentMessages(chatId) } }
      if (method === 'POST' && chat[2] !== 'messages') {
        if (chat[2] === 'block') api.block(chatId, (await controlBody(request)).how === 'deactivated' ? 'deactivated' : 'blocked')
        else api.unblock(chatId)
        return { status: 200, body: { chat_id: chatId, blocked: chats.get(chatId)?.blocked ?? false } }
      }
    }
    if (rest === '/faults' && method === 'POST') {
      const body = await controlBody(request)
      const fault = body.fault as TelegramFault
      if (!FAULTS.includes(fault)) throw new ControlRefusal(400, 'INVALID_FAULT', `fault is one of ${FAULTS.join(', ')}`)
      const count = body.count === undefined ? 1 : Number(body.count)
      if (!Number.isInteger(count) || count < 1) throw new ControlRefusal(400, 'INVALID_COUNT', 'count is a whole number from 1')
      api.fault(fault, count, body.retry_after === undefined ? {} : { retryAfterS: Number(body.retry_after) })
      return { status: 200, body: { faults: faults.map(({ fault, remaining }) => ({ fault, remaining })) } }
    }
    if (rest === '/faults' && method === 'DELETE') {
      api.clearFaults()
      return { status: 200, body: { faults: [] } }
    }
    if (rest === '/webhook' && method === 'GET') return { status: 200, body: webhookInfo() }
    throw new ControlRefusal(404, 'NOT_FOUND', `no control ${method} ${path}: POST ${TELEGRAM_CONTROLS_PATH}/updates, GET ${TELEGRAM_CONTROLS_PATH}/chats/<id>/messages, POST ${TELEGRAM_CONTROLS_PATH}/chats/<id>/block or /unblock, POST or DELETE ${TELEGRAM_CONTROLS_PATH}/faults, GET ${TELEGRAM_CONTROLS_PATH}/webhook`)
  }

  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://emulator').pathname
    const isControl = controls !== false && (path === TELEGRAM_CONTROLS_PATH || path.startsWith(`${TELEGRAM_CONTROLS_PATH}/`))
    const answering = isControl ? answerControl(request, path) : answerMethod(request, path)
    answering.then(({ status, body }) => { sendJson(response, status, body) }, (err: unknown) => {
      if (err instanceof ControlRefusal) sendJson(response, err.status, { error: { code: err.code, message: err.message } })
      else if (err instanceof BotApiRefusal) sendJson(response, err.errorCode, refusalBody(err))
      else sendJson(response, 500, { ok: false, error_code: 500, description: 'Internal Server Error' })
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the Telegram emulator has no TCP address')
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address

  const api: TelegramBotApi = {
    url: `http://${host}:${address.port}`,
    token,
    bot,
    get webhook () {
      return { url: webhook.url, ...(webhook.secretToken === undefined ? {} : { secretToken: webhook.secretToken }) }
    },
    userWrites,
    async delivered () {
      // A run of deliveries that ends with updates still queued starts the next before it ends.
      let run: Promise<void>
      do {
        run = deliveries
        await run
      } while (run !== deliveries)
    },
    sentMessages: chatId => [...(chats.get(chatId)?.sent ?? [])],
    get sendMessageCalls () {
      return sendMessageCalls
    },
    block (chatId, how = 'blocked') {
      const state = chats.get(chatId)
      if (state === undefined) throw new RangeError(`chat ${chatId} never wrote to the bot`)
      state.blocked = how
    },
    unblock (chatId) {
      const state = chats.get(chatId)
      if (state !== undefined) delete state.blocked
    },
    fault (fault, count = 1, { retryAfterS = 3 } = {}) {
      if (!FAULTS.includes(fault)) throw new RangeError(`fault is one of ${FAULTS.join(', ')}, not ${String(fault)}`)
      if (!Number.isInteger(count) || count < 1) throw new RangeError(`count is a whole number from 1, not ${count}`)
      if (!Number.isInteger(retryAfterS) || retryAfterS < 1) throw new RangeError(`retry_after is whole seconds from 1, not ${retryAfterS}`)
      faults.push({ fault, remaining: count, retryAfterS })
    },
    clearFaults () {
      faults.length = 0
    },
    close () {
      closed ??= (async () => {
        closing.abort()
        for (const release of held) release()
        held.clear()
        dropPending()
        const stopped = new Promise<void>(resolve => server.close(() => { resolve() }))
        for (const socket of sockets) socket.destroy()
        await stopped
      })()
      return closed
    },
  }
  return api
}

// --- Parameters ----------------------------------------------------------------------------

/** The query string and the body, merged; a body's field wins. */
async function paramsOf (request: IncomingMessage): Promise<Params> {
  const params: Params = Object.fromEntries(new URL(request.url ?? '/', 'http://emulator').searchParams)
  const body = await readBody(request)
  if (body.length === 0) return params
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type === 'application/json') {
    let parsed: unknown
    try {
      parsed = JSON.parse(body.toString('utf8'))
    } catch {
      throw badRequest('invalid JSON in request body')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('request body must be a JSON object')
    return { ...params, ...parsed as Params }
  }
  if (type === 'application/x-www-form-urlencoded') return { ...params, ...Object.fromEntries(new URLSearchParams(body.toString('utf8'))) }
  if (type === 'multipart/form-data') {
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': request.headers['content-type'] as string } }).formData().catch(() => {
      throw badRequest('can\'t parse multipart/form-data body')
    })
    for (const [name, value] of form) params[name] = typeof value === 'string' ? value : '[file]'
    return params
  }
  return params
}

async function readBody (request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer)
  }
  if (size > MAX_BODY_BYTES) throw new BotApiRefusal(413, 'Request Entity Too Large')
  return Buffer.concat(chunks)
}

async function controlBody (request: IncomingMessage): Promise<Params> {
  const text = (await readBody(request)).toString('utf8')
  if (text.trim() === '') return {}
  try {
    const parsed = JSON.parse(text) as unknown
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Params
  } catch {}
  throw new ControlRefusal(400, 'INVALID_BODY', 'send a JSON object')
}

function userMessageOf (body: Params): UserMessage {
  const chatId = integerParam(body.chat_id)
  if (chatId === undefined || chatId === 0) throw new ControlRefusal(400, 'INVALID_CHAT_ID', 'chat_id is a non-zero whole number: the user\'s id for a private chat')
  if (typeof body.text !== 'string' || body.text === '') throw new ControlRefusal(400, 'INVALID_TEXT', 'text is what the user writes, e.g. "/start <payload>"')
  const chatType = body.chat_type ?? 'private'
  if (chatType !== 'private' && chatType !== 'group' && chatType !== 'supergroup') throw new ControlRefusal(400, 'INVALID_CHAT_TYPE', 'chat_type is private, group or supergroup')
  if (chatType === 'private' && chatId < 0) throw new ControlRefusal(400, 'INVALID_CHAT_ID', 'a private chat\'s id is the user\'s, above 0')
  return {
    chatId,
    text: body.text,
    chatType,
    ...(typeof body.first_name === 'string' ? { firstName: body.first_name } : {}),
    ...(typeof body.username === 'string' ? { username: body.username } : {}),
  }
}

/** A whole number given as a number or as its decimal text (a query or a form). */
function integerParam (value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) return Number(value)
  return undefined
}

function booleanParam (value: unknown): boolean {
  return value === true || value === 'true' || value === '1' || value === 1
}

/** An array, or its JSON text (a query or a form). */
function jsonParam (value: unknown, name: string): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    throw badRequest(`can't parse ${name} JSON object`)
  }
}

function stringList (value: unknown, name: string): string[] {
  const list = jsonParam(value, name)
  if (!Array.isArray(list) || !list.every(item => typeof item === 'string')) throw badRequest(`can't parse ${name} JSON object`)
  return list
}

function inlineKeyboard (value: unknown): { inline_keyboard: InlineKeyboardButton[][] } {
  const markup = jsonParam(value, 'reply keyboard') as { inline_keyboard?: unknown } | null
  if (typeof markup !== 'object' || markup === null || !Array.isArray(markup.inline_keyboard)) throw badRequest('can\'t parse reply keyboard markup JSON object')
  const rows = markup.inline_keyboard.map(row => {
    if (!Array.isArray(row)) throw badRequest('can\'t parse inline keyboard button: InlineKeyboardButton must be an Object')
    return row.map((button: unknown) => {
      const { text, url, callback_data: callbackData } = (button ?? {}) as Record<string, unknown>
      if (typeof text !== 'string' || text === '') throw badRequest('can\'t parse inline keyboard button: Field "text" must be of type String')
      if (url === undefined && callbackData === undefined) throw badRequest('can\'t parse inline keyboard button: Text buttons are unallowed in the inline keyboard')
      if (url !== undefined && !isButtonUrl(url)) throw badRequest('BUTTON_URL_INVALID')
      return { text, ...(url === undefined ? {} : { url: url as string }), ...(callbackData === undefined ? {} : { callback_data: String(callbackData) }) }
    })
  })
  return { inline_keyboard: rows }
}

function isButtonUrl (value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return ((url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '') || url.protocol === 'tg:'
  } catch {
    return false
  }
}

/** Telegram's HTML mode: the tags it knows, closed in order, and `&` only in the entities it knows. */
function checkHtml (text: string): void {
  const open: string[] = []
  const token = /<(\/?)([A-Za-z][A-Za-z0-9-]*)?[^<>]*>|<|&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);|&/g
  for (const match of text.matchAll(token)) {
    const offset = Buffer.byteLength(text.slice(0, match.index))
    const [whole, closing, tag] = match
    if (whole === '&') throw badRequest(`can't parse entities: Character '&' is reserved and must be escaped at byte offset ${offset}`)
    if (whole.startsWith('&')) {
      if (!/^&(#\d+|#x[0-9a-fA-F]+|lt|gt|amp|quot);$/.test(whole)) throw badRequest(`can't parse entities: Unsupported HTML entity at byte offset ${offset}`)
      continue
    }
    const name = tag?.toLowerCase()
    if (name === undefined || !HTML_TAGS.has(name)) throw badRequest(`can't parse entities: Unsupported start tag "${tag ?? ''}" at byte offset ${offset}`)
    if (closing === '') open.push(name)
    else if (open.pop() !== name) throw badRequest(`can't parse entities: Unmatched end tag at byte offset ${offset}, expected "</${open.at(-1) ?? ''}>", found "</${name}>"`)
  }
  if (open.length > 0) throw badRequest(`can't parse entities: Can't find end tag corresponding to start tag "${open.at(-1) as string}"`)
}

/** What a user reads of HTML text: the tags gone, the entities decoded. */
function htmlText (text: string): string {
  return text.replace(/<[^<>]*>/g, '').replace(/&(#\d+|#x[0-9a-fA-F]+|lt|gt|amp|quot);/g, (_, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(parseInt(entity.slice(2), 16))
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)))
    return ({ lt: '<', gt: '>', amp: '&', quot: '"' } as Record<string, string>)[entity] as string
  })
}

function refusalBody (err: BotApiRefusal): unknown {
  return { ok: false, error_code: err.errorCode, description: err.description, ...(err.parameters === undefined ? {} : { parameters: err.parameters }) }
}

function refusal (err: BotApiRefusal): { status: number, body: unknown } {
  return { status: err.errorCode, body: refusalBody(err) }
}

function sendJson (response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
  response.end(text)
}

function networkCause (err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause
  return typeof cause?.code === 'string' ? cause.code : 'no answer'
}
