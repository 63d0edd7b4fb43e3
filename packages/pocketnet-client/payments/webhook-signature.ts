/**
 * Signed webhooks, as Stripe and BTCPay sign theirs: the sender puts
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` in a header, and the
 * receiver recomputes it over the raw bytes it got, compares in constant time, and refuses a
 * timestamp too far from its own clock (a replay of an old, genuine request). The service signs
 * its payment webhooks with this (`X-Payment-Signature`); a receiver needs only this file.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { CodedError } from '../coded-error.js'

/** The header the service's payment webhooks carry the signature in. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Payment-Signature'

/** How far, in seconds, a signature's timestamp may be from the receiver's clock by default. */
export const DEFAULT_WEBHOOK_TOLERANCE_S = 300

export const WEBHOOK_SIGNATURE_ERROR_CODES = {
  WEBHOOK_ERR_HEADER: 'The signature header is missing, given twice, or not t=<unix seconds>,v1=<64 hex digits>.',
  WEBHOOK_ERR_SIGNATURE: 'No v1 signature of the header matches the body under this secret: another secret, or a body changed on the way.',
  WEBHOOK_ERR_TIMESTAMP: 'The signature is genuine but its timestamp is further from now than the tolerance: a replay, or clocks that disagree.',
} as const

export type WebhookSignatureErrorCode = keyof typeof WEBHOOK_SIGNATURE_ERROR_CODES

/** A webhook refused; `code` says which rule. Messages never quote the secret or a signature. */
export class WebhookSignatureError extends CodedError<WebhookSignatureErrorCode> {
  override name = 'WebhookSignatureError'
}

function checkSecret (secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('the webhook secret must be a non-empty string')
}

function hmacHex (secret: string, body: string | Uint8Array, timestampS: number): string {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest('hex')
}

/**
 * The header value that signs `body` (the exact bytes sent) at `timestampS`.
 * @throws TypeError for an empty secret or a timestamp that is not whole seconds
 */
export function signWebhook (secret: string, body: string | Uint8Array, timestampS: number): string {
  checkSecret(secret)
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) throw new TypeError('the timestamp must be whole seconds since the epoch')
  return `t=${timestampS},v1=${hmacHex(secret, body, timestampS)}`
}

export interface VerifyWebhookOptions {
  secret: string
  /** The signature header as received (Node gives an array when it came twice: refused). */
  header: string | readonly string[] | undefined | null
  /** The raw body, byte for byte as received: not a parsed and re-serialised copy. */
  body: string | Uint8Array
  /** The receiver's clock, in seconds since the epoch. */
  nowS: number
  /** Default {@link DEFAULT_WEBHOOK_TOLERANCE_S}. */
  toleranceS?: number
}

interface ParsedHeader { timestampS: number, signatures: string[] }

/** `t=…,v1=…[,v1=…]`; other schemes are ignored, so that a later one can be added beside v1. */
function parseHeader (header: VerifyWebhookOptions['header']): ParsedHeader {
  if (typeof header !== 'string') throw new WebhookSignatureError('WEBHOOK_ERR_HEADER', header == null ? 'no signature header' : 'the signature header came more than once')
  let timestampS: number | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const [key, value, extra] = part.trim().split('=')
    if (key === undefined || value === undefined || extra !== undefined) throw new WebhookSignatureError('WEBHOOK_ERR_HEADER', 'the signature header is not a list of key=value')
    if (key === 't') {
      if (timestampS !== undefined || !/^\d{1,15}$/.test(value)) throw new WebhookSignatureError('WEBHOOK_ERR_HEADER', 'the signature header needs one t=<unix seconds>')
      timestampS = Number(value)
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) throw new WebhookSignatureError('WEBHOOK_ERR_HEADER', 'a v1 signature is not 64 lowercase hex digits')
      signatures.push(value)
    }
  }
  if (timestampS === undefined || signatures.length === 0) throw new WebhookSignatureError('WEBHOOK_ERR_HEADER', 'the signature header needs t=<unix seconds> and v1=<signature>')
  return { timestampS, signatures }
}

/**
 * Checks a webhook: the header parses, one of its v1 signatures is the body's under `secret`
 * (compared in constant time), and its timestamp is within `toleranceS` of `nowS`.
 * @returns the signed timestamp
 * @throws WebhookSignatureError `WEBHOOK_ERR_HEADER`, `WEBHOOK_ERR_SIGNATURE`, `WEBHOOK_ERR_TIMESTAMP`
 *   ({@link WEBHOOK_SIGNATURE_ERROR_CODES}); TypeError for an empty secret
 */
export function verifyWebhookSignature (options: VerifyWebhookOptions): { timestampS: number } {
  const { secret, body, nowS, toleranceS = DEFAULT_WEBHOOK_TOLERANCE_S } = options
  checkSecret(secret)
  const { timestampS, signatures } = parseHeader(options.header)
  const expected = Buffer.from(hmacHex(secret, body, timestampS), 'hex')
  // Every candidate is compared, whichever matches: the time taken says nothing about which.
  let matches = false
  for (const signature of signatures) matches = timingSafeEqual(Buffer.from(signature, 'hex'), expected) || matches
  if (!matches) throw new WebhookSignatureError('WEBHOOK_ERR_SIGNATURE', 'the signature does not match the body')
  // Checked after the signature: a refusal for time means the request was genuine, only old.
  if (!(Math.abs(nowS - timestampS) <= toleranceS)) {
    throw new WebhookSignatureError('WEBHOOK_ERR_TIMESTAMP', `the signature is ${Math.round(nowS - timestampS)} s old, beyond the ${toleranceS} s tolerated`)
  }
  return { timestampS }
}
