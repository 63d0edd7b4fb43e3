/**
 * Verifies the signature object a Bastyon mini-app gets from the host (`sdk.sign(text)`,
 * `sdk.get.account()`), strictly: every field's exact format, the session it was made for, its
 * lifetime on an injected clock, low-S, and the address derived from the key. The format and
 * the flaws of the ecosystem's own check are in docs/bastyon-signatures.md.
 *
 * secp256k1 is @noble/curves (audited), the hashes @noble/hashes, Base58Check bs58check: no curve
 * or hash code of our own.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import bs58check from 'bs58check'
import { ADDRESS_VERSION, NETWORK_NAME, networkOfVersion, type PocketnetNetwork } from '../address.js'
import { CodedError } from '../coded-error.js'

/** Every code {@link verifySignature} can throw, with what it means. */
export const SIGNATURE_ERROR_CODES = {
  SIG_MALFORMED: 'The object is not a Bastyon signature: a field is missing, extra, or not in its exact format.',
  SIG_VERSION: 'The object is not of version 1 (`v: 1`): older forms skip the session and lifetime.',
  SIG_WRONG_NETWORK: 'The address is of another Pocketnet network (testnet or regtest on mainnet, or the reverse).',
  SIG_ADDRESS_MISMATCH: 'The address is not the one of the public key.',
  SIG_SESSION_MISMATCH: 'The signature was made for another session than the one expected.',
  SIG_SESSION_NOT_ASCII: 'The signature was made for a session that is not ASCII, such as an app id with a look-alike letter (Cyrillic `о` for `o`), where an ASCII one was expected.',
  SIG_NOT_YET_VALID: 'The signature was issued later than now, beyond the allowed clock skew.',
  SIG_EXPIRED: 'The signature is past its lifetime (the shorter of its own and the verifier\'s maximum), beyond the allowed clock skew.',
  SIG_HIGH_S: 'The signature is the high-S twin of a valid one: the host only makes low-S signatures.',
  SIG_BAD_SIGNATURE: 'The signature does not verify against the public key and the signed text.',
} as const

export type SignatureErrorCode = keyof typeof SIGNATURE_ERROR_CODES

/** A signature that was refused; `code` is stable, the message says which rule in words. */
export class SignatureError extends CodedError<SignatureErrorCode> {
  override name = 'SignatureError'
}

export interface VerifyOptions {
  /** The exact session the signature must have been made for, e.g. `<challenge>/<appId>`. */
  session: string
  /** Which network's addresses are accepted. Default `main`. */
  network?: PocketnetNetwork
  /** Now, in milliseconds since the epoch. Default `Date.now()`. */
  now?: number
  /** Longest lifetime accepted, whatever the signature says. Default 1280 (what `account()` asks for). */
  maxAgeSeconds?: number
  /** Allowed difference between the signer's clock and ours, both ways. Default 60. */
  clockSkewSeconds?: number
}

export interface VerifiedSignature {
  /** The signer's Pocketnet address. */
  address: string
  /** Compressed public key, hex. */
  pubkey: string
  issuedAt: Date
  /** When it stops being accepted (without the skew). */
  expiresAt: Date
  /** `r‖s`, hex: what a replay cache remembers until `expiresAt` plus the skew. */
  signature: string
}

const FIELDS = ['nonce', 'signature', 'pubkey', 'address', 'v']
const SIGNATURE = /^[0-9a-f]{128}$/
const PUBKEY = /^0[23][0-9a-f]{64}$/
// date is the signer's `new Date().toISOString()`; exp whole seconds; s the session, hex.
const NONCE = /^date=(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z),exp=([1-9]\d{0,6}),s=((?:[0-9a-f]{2})+)$/

/**
 * The host's hex of a session (its `hexEncode`): each UTF-16 code unit above 0xFF is lowered by
 * 0x350, then written as lowercase hex of at least two digits. For ASCII this is the hex of the
 * UTF-8 bytes; for other text it is not, which is why the expected session is encoded and
 * compared, never the signed one decoded.
 */
export function hostHex (session: string): string {
  let hex = ''
  for (let i = 0; i < session.length; i++) {
    let unit = session.charCodeAt(i)
    if (unit > 0xFF) unit -= 0x350
    hex += unit.toString(16).padStart(2, '0')
  }
  return hex
}

/** Hex of bytes 0x00 to 0x7F only. */
const ASCII_HEX = /^(?:[0-7][0-9a-f])*$/

/** True when every UTF-16 code unit of `text` is ASCII: the texts whose host hex no other ASCII text shares. */
function isAscii (text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

function fail (code: SignatureErrorCode, message: string): never {
  throw new SignatureError(code, message)
}

/**
 * Checks a signature object, as the host makes it, for `options.session`.
 * @returns the signer's address and the signature's lifetime
 * @throws SignatureError with a stable `code` ({@link SIGNATURE_ERROR_CODES})
 * @example const { address } = verifySignature(body.signature, { session: `${challenge}/${appId}` })
 */
export function verifySignature (object: unknown, options: VerifyOptions): VerifiedSignature {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) fail('SIG_MALFORMED', 'The signature must be an object')
  const fields = object as Record<string, unknown>
  const extra = Object.keys(fields).find(key => !FIELDS.includes(key))
  if (extra !== undefined) fail('SIG_MALFORMED', `The signature has a field it should not: ${JSON.stringify(extra.slice(0, 32))}`)
  const missing = FIELDS.find(field => field !== 'v' && !(field in fields))
  if (missing !== undefined) fail('SIG_MALFORMED', `The signature has no ${missing}`)
  if (fields.v !== 1) fail('SIG_VERSION', 'The signature must have v: 1')
  const { nonce, signature, pubkey, address } = fields
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) fail('SIG_MALFORMED', 'signature must be 128 lowercase hex characters (r‖s)')
  if (typeof pubkey !== 'string' || !PUBKEY.test(pubkey)) fail('SIG_MALFORMED', 'pubkey must be a compressed public key: 66 lowercase hex characters starting 02 or 03')
  if (typeof address !== 'string' || address.length < 26 || address.length > 35) fail('SIG_MALFORMED', 'address must be a Pocketnet address')
  if (typeof nonce !== 'string') fail('SIG_MALFORMED', 'nonce must be a string')
  const parts = NONCE.exec(nonce)
  if (parts === null) fail('SIG_MALFORMED', 'nonce must read date=<ISO time with milliseconds>Z,exp=<seconds>,s=<session in hex>')
  const [, date, exp, sessionHex] = parts as unknown as [string, string, string, string]
  const issued = new Date(date)
  if (Number.isNaN(issued.getTime()) || issued.toISOString() !== date) fail('SIG_MALFORMED', 'nonce date is not a real time')

  const network = options.network ?? 'main'
  const payload = bs58check.decodeUnsafe(address)
  if (payload === undefined || payload.length !== 21) fail('SIG_MALFORMED', 'address is not a Base58Check address')
  if (payload[0] !== ADDRESS_VERSION[network]) {
    const other = networkOfVersion(payload[0])
    if (other !== undefined) fail('SIG_WRONG_NETWORK', `The address is a ${NETWORK_NAME[other]} address; this service accepts ${NETWORK_NAME[network]} ones`)
    fail('SIG_MALFORMED', 'address is not a Pocketnet address')
  }
  const key = Buffer.from(pubkey, 'hex')
  if (!Buffer.from(ripemd160(sha256(key))).equals(payload.subarray(1))) fail('SIG_ADDRESS_MISMATCH', 'The address is not the public key\'s')

  if (sessionHex !== hostHex(options.session)) {
    // App ids and challenges are ASCII; a byte above 0x7F is a letter of another script, often one
    // that looks like a Latin one. (Some, Greek letters among them, the host's hex folds onto
    // ASCII: their signature is the ASCII session's own, and no verifier can tell them apart.)
    if (!ASCII_HEX.test(sessionHex) && isAscii(options.session)) fail('SIG_SESSION_NOT_ASCII', 'The signature was made for a session that is not ASCII')
    fail('SIG_SESSION_MISMATCH', 'The signature was made for another session')
  }

  const now = options.now ?? Date.now()
  const skewMs = (options.clockSkewSeconds ?? 60) * 1000
  const lifetimeMs = Math.min(Number(exp), options.maxAgeSeconds ?? 1280) * 1000
  const expiresAt = issued.getTime() + lifetimeMs
  if (issued.getTime() - skewMs > now) fail('SIG_NOT_YET_VALID', 'The signature is dated in the future')
  if (now > expiresAt + skewMs) fail('SIG_EXPIRED', 'The signature has expired')

  let parsed
  try {
    parsed = secp256k1.Signature.fromHex(signature, 'compact')
  } catch {
    // r or s out of the curve's range.
    fail('SIG_BAD_SIGNATURE', 'The signature does not verify')
  }
  if (parsed.hasHighS()) fail('SIG_HIGH_S', 'The signature is not in its low-S form')
  const digest = sha256(new TextEncoder().encode(nonce))
  let valid = false
  try {
    valid = secp256k1.verify(parsed.toBytes('compact'), digest, key, { prehash: false, lowS: true, format: 'compact' })
  } catch {
    // A public key that is not a point of the curve.
  }
  if (!valid) fail('SIG_BAD_SIGNATURE', 'The signature does not verify')
  return { address, pubkey, issuedAt: issued, expiresAt: new Date(expiresAt), signature }
}
