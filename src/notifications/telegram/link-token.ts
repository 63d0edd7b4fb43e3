/**
 * Linking a Telegram chat to a signed-in user, with no state until the link is made: the service
 * gives the user a deep link `https://t.me/<bot>?start=<token>`; Telegram opens the bot, and the
 * user's Start sends `/start <token>` to the webhook from their chat; the token says whose address
 * the chat is linked to (docs/notifications.md, "Telegram", "Linking a chat").
 *
 * A token is 48 bytes in base64url, 64 characters of A-Z a-z 0-9 _ -, the most Telegram takes as
 * a start parameter:
 *
 *   version (1) ‖ expiry, Unix seconds (4) ‖ nonce (6) ‖ address, encrypted (21) ‖ tag (16)
 *
 * The address's 21 bytes (version byte and key hash) are encrypted with AES-256-CTR under a counter
 * made of the nonce, the expiry and the version, so that neither Telegram nor anyone who sees the
 * link learns which Bastyon account the chat belongs to; the tag is HMAC-SHA256 over everything
 * before it, cut to 16 bytes, so that no token can be made or changed without the key. Both keys
 * are derived with HKDF from one secret (the bot's token, or a secret of the operator's), so every
 * instance that shares it verifies what any other issued.
 *
 * A token is valid until its expiry, as often as it is shown: making it single-use is the caller's,
 * who records the nonce when the link is made and refuses a nonce already recorded (kept until the
 * token's expiry, after which the token is refused anyway).
 */
import { createCipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { addressBytes, addressFromBytes } from 'pocketnet-client'

/** How long a link may wait to be opened, by default. */
export const LINK_TOKEN_TTL_MS = 10 * 60_000

/** What Telegram takes as a deep link's start parameter. */
export const START_PARAMETER = /^[A-Za-z0-9_-]{1,64}$/

/** A bot's username: 5 to 32 of A-Z a-z 0-9 _, ending in "bot". */
const BOT_USERNAME = /^[A-Za-z][A-Za-z0-9_]{1,28}[Bb][Oo][Tt]$/

const FORMAT_VERSION = 1
const EXPIRY_BYTES = 4
const NONCE_BYTES = 6
const ADDRESS_BYTES = 21
const TAG_BYTES = 16
const SIGNED_BYTES = 1 + EXPIRY_BYTES + NONCE_BYTES + ADDRESS_BYTES
const TOKEN_BYTES = SIGNED_BYTES + TAG_BYTES
const TOKEN_CHARS = Math.ceil(TOKEN_BYTES * 4 / 3)
const MIN_SECRET_LENGTH = 16
const KEY_INFO = 'bastyon-miniapp-backend telegram link token v1'

export interface IssuedLinkToken {
  token: string
  /** 8 characters naming this token alone: what the caller records to make it single-use. */
  nonce: string
  /** When the token stops being accepted, ms since the epoch (a whole second). */
  expiresAt: number
}

export type LinkTokenRefusal =
  /** Not a token of this format: another length, another alphabet, another version. */
  | 'malformed'
  /** Not made with this secret, or changed since. */
  | 'forged'
  | 'expired'

export type VerifiedLinkToken =
  | { ok: true, address: string, nonce: string, expiresAt: number }
  | { ok: false, reason: LinkTokenRefusal }

export interface LinkTokensOptions {
  /** The keys' secret: the bot's token or a secret of the operator's, 16 characters or more. Never logged. */
  secret: string
  /** Default {@link LINK_TOKEN_TTL_MS}. At most 2^31 seconds. */
  ttlMs?: number
  /** Random bytes for the nonces. Default node:crypto's randomBytes. */
  random?: (size: number) => Uint8Array
}

export class LinkTokens {
  readonly ttlMs: number
  readonly #encryptionKey: Buffer
  readonly #tagKey: Buffer
  readonly #random: (size: number) => Uint8Array

  constructor (options: LinkTokensOptions) {
    if (typeof options.secret !== 'string' || options.secret.length < MIN_SECRET_LENGTH) throw new TypeError(`the link tokens' secret must be a string of ${MIN_SECRET_LENGTH} characters or more`)
    const ttlMs = options.ttlMs ?? LINK_TOKEN_TTL_MS
    if (!Number.isInteger(ttlMs) || ttlMs < 1000 || ttlMs > 2 ** 31 * 1000) throw new RangeError(`a link token's ttlMs is a whole number from 1000, not ${ttlMs}`)
    const keys = Buffer.from(hkdfSync('sha256', options.secret, '', KEY_INFO, 64))
    this.#encryptionKey = keys.subarray(0, 32)
    this.#tagKey = keys.subarray(32)
    this.ttlMs = ttlMs
    this.#random = options.random ?? randomBytes
  }

  /** A token linking to `address`, valid from `now` (ms since the epoch) for ttlMs. */
  issue (address: string, now: number): IssuedLinkToken {
    const payload = addressBytes(address)
    if (payload === undefined) throw new TypeError('a link token names a Pocketnet address')
    if (!Number.isFinite(now)) throw new RangeError(`now is ms since the epoch, not ${now}`)
    const expirySeconds = Math.floor((now + this.ttlMs) / 1000)
    if (expirySeconds >= 2 ** 32) throw new RangeError('a link token expires before 2106')
    const nonce = Buffer.from(this.#random(NONCE_BYTES))
    if (nonce.length !== NONCE_BYTES) throw new RangeError(`the random source gave ${nonce.length} bytes, not ${NONCE_BYTES}`)
    const head = Buffer.alloc(1 + EXPIRY_BYTES + NONCE_BYTES)
    head.writeUInt8(FORMAT_VERSION, 0)
    head.writeUInt32BE(expirySeconds, 1)
    nonce.copy(head, 1 + EXPIRY_BYTES)
    const signed = Buffer.concat([head, this.#crypt(head, payload)])
    const token = Buffer.concat([signed, this.#tag(signed)]).toString('base64url')
    return { token, nonce: nonce.toString('base64url'), expiresAt: expirySeconds * 1000 }
  }

  /** Whose address `token` names, or why it is refused; the tag is checked before the expiry. */
  verify (token: string, now: number): VerifiedLinkToken {
    // NaN compares false with every expiry: it would make every token unexpired.
    if (!Number.isFinite(now)) throw new RangeError(`now is ms since the epoch, not ${now}`)
    if (typeof token !== 'string' || token.length !== TOKEN_CHARS || !START_PARAMETER.test(token)) return { ok: false, reason: 'malformed' }
    const bytes = Buffer.from(token, 'base64url')
    if (bytes.length !== TOKEN_BYTES || bytes[0] !== FORMAT_VERSION) return { ok: false, reason: 'malformed' }
    const signed = bytes.subarray(0, SIGNED_BYTES)
    if (!timingSafeEqual(this.#tag(signed), bytes.subarray(SIGNED_BYTES))) return { ok: false, reason: 'forged' }
    const head = signed.subarray(0, 1 + EXPIRY_BYTES + NONCE_BYTES)
    const expiresAt = head.readUInt32BE(1) * 1000
    if (now >= expiresAt) return { ok: false, reason: 'expired' }
    const address = addressFromBytes(this.#crypt(head, signed.subarray(head.length)))
    // Only a token this secret made gets here, and each one names an address.
    if (address === undefined) return { ok: false, reason: 'forged' }
    return { ok: true, address, nonce: head.subarray(1 + EXPIRY_BYTES).toString('base64url'), expiresAt }
  }

  /** AES-256-CTR, its counter block the token's head (unique per nonce and expiry), zero-padded. */
  #crypt (head: Buffer, data: Uint8Array): Buffer {
    const counter = Buffer.alloc(16)
    head.copy(counter)
    const cipher = createCipheriv('aes-256-ctr', this.#encryptionKey, counter)
    return Buffer.concat([cipher.update(data), cipher.final()])
  }

  #tag (signed: Uint8Array): Buffer {
    return createHmac('sha256', this.#tagKey).update(signed).digest().subarray(0, TAG_BYTES)
  }
}

/** The link that opens the bot `botUsername` and, on Start, sends `/start <token>` from the user's chat. */
export function deepLink (botUsername: string, token: string): string {
  const username = botUsername.startsWith('@') ? botUsername.slice(1) : botUsername
  if (!BOT_USERNAME.test(username)) throw new TypeError(`a bot's username is 5 to 32 of A-Z a-z 0-9 _ ending in "bot", not ${JSON.stringify(botUsername)}`)
  if (!START_PARAMETER.test(token)) throw new TypeError('a start parameter is 1 to 64 of A-Z a-z 0-9 _ -')
  return `https://t.me/${username}?start=${token}`
}
