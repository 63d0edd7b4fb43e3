/**
 * What a request to the bot's webhook means: Telegram POSTs each Update as JSON with the header
 * `X-Telegram-Bot-Api-Secret-Token` set to the `secret_token` given to setWebhook (Telegram signs
 * nothing else: the header is the whole proof that Telegram sent it). The header is compared in
 * constant time; then the update is read:
 *
 * - `start`: `/start <token>` (or `/start@<bot> <token>`) from a person in a private chat: the
 *   user opened the deep link; `token` is still to be verified (link-token.ts).
 * - `other`: any other text from a person in a private chat (a bare `/start` too).
 * - `ignored`: the rest (groups, channels, edits, stickers, bots, a body that is no Update).
 * - `unauthorized`: the header is missing or wrong: answer 401, act on nothing.
 *
 * Telegram tries an update again until it gets a 2xx, so a route should answer 200 to everything
 * but `unauthorized`, `ignored` included, and may see the same `updateId` twice.
 */
import { createHash, hkdfSync, timingSafeEqual } from 'node:crypto'
import { START_PARAMETER } from './link-token.js'

export const SECRET_TOKEN_HEADER = 'x-telegram-bot-api-secret-token'

export interface TelegramSender {
  id: number
  firstName: string
  username?: string
}

export type WebhookUpdate =
  | { kind: 'start', updateId: number, chatId: number, token: string, from: TelegramSender }
  | { kind: 'other', updateId: number, chatId: number, text: string, from: TelegramSender }
  | { kind: 'ignored', updateId?: number, reason: string }
  | { kind: 'unauthorized', reason: 'missing_secret' | 'wrong_secret' }

/** Request headers as node:http, Fastify or fetch give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface WebhookRequest {
  headers: WebhookHeaders
  /** The body as received (text or bytes), or already parsed from JSON. */
  body: unknown
}

/** `/start`, an optional `@<bot>`, and what follows after spaces. */
const START_COMMAND = /^\/start(?:@[A-Za-z0-9_]{1,32})?(?:\s+(.*))?$/s

/**
 * A webhook secret made from the bot's token: 43 characters of A-Z a-z 0-9 _ -, the same on every
 * instance and every start, another for another token. An operator may configure their own instead.
 */
export function webhookSecretFor (botToken: string): string {
  if (typeof botToken !== 'string' || botToken === '') throw new TypeError('a webhook secret is made from the bot\'s token')
  return Buffer.from(hkdfSync('sha256', botToken, '', 'bastyon-miniapp-backend telegram webhook secret v1', 32)).toString('base64url')
}

/** Whether the request is Telegram's, and what its update says. */
export function readWebhookUpdate (request: WebhookRequest, secretToken: string): WebhookUpdate {
  if (typeof secretToken !== 'string' || secretToken === '') throw new TypeError('the webhook\'s secret token is needed to check its requests')
  const given = headerOf(request.headers, SECRET_TOKEN_HEADER)
  if (given === undefined) return { kind: 'unauthorized', reason: 'missing_secret' }
  if (typeof given !== 'string' || !sameSecret(given, secretToken)) return { kind: 'unauthorized', reason: 'wrong_secret' }
  return updateOf(parsedBody(request.body))
}

function updateOf (update: unknown): WebhookUpdate {
  if (!isObject(update)) return { kind: 'ignored', reason: 'not an Update' }
  const updateId = Number.isSafeInteger(update.update_id) ? update.update_id as number : undefined
  const base = updateId === undefined ? {} : { updateId }
  if (updateId === undefined) return { ...base, kind: 'ignored', reason: 'no update_id' }
  const message = update.message
  if (!isObject(message)) {
    const type = Object.keys(update).find(key => key !== 'update_id') ?? 'none'
    return { ...base, kind: 'ignored', reason: `an update of type ${type}` }
  }
  const chat = message.chat
  const from = message.from
  if (!isObject(chat) || !Number.isSafeInteger(chat.id)) return { ...base, kind: 'ignored', reason: 'a message without a chat' }
  if (chat.type !== 'private') return { ...base, kind: 'ignored', reason: `a message in a ${typeof chat.type === 'string' ? chat.type : 'unknown'} chat` }
  if (!isObject(from) || !Number.isSafeInteger(from.id) || from.is_bot === true) return { ...base, kind: 'ignored', reason: 'a message not from a person' }
  if (typeof message.text !== 'string') return { ...base, kind: 'ignored', reason: 'a message without text' }
  const sender: TelegramSender = {
    id: from.id as number,
    firstName: typeof from.first_name === 'string' ? from.first_name : '',
    ...(typeof from.username === 'string' ? { username: from.username } : {}),
  }
  const chatId = chat.id as number
  const payload = START_COMMAND.exec(message.text.trim())?.[1]?.trim()
  if (payload !== undefined && START_PARAMETER.test(payload)) return { kind: 'start', updateId, chatId, token: payload, from: sender }
  return { kind: 'other', updateId, chatId, text: message.text, from: sender }
}

function parsedBody (body: unknown): unknown {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return body
  try {
    return JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'))
  } catch {
    return undefined
  }
}

function headerOf (headers: WebhookHeaders, name: string): string | string[] | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  const key = Object.keys(headers).find(candidate => candidate.toLowerCase() === name)
  return key === undefined ? undefined : headers[key]
}

/** Equal lengths for timingSafeEqual, and no time that tells how long the secret is or how much of it matched. */
function sameSecret (given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
