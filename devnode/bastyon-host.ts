/**
 * The Bastyon host's signing, emulated (docs/bastyon-signatures.md): the nonce text, a single
 * SHA-256, RFC 6979 low-S compact `r‖s` through @noble/curves, the compressed key and its P2PKH
 * address. For the tests of the verifier and of sign-in, the demo page's stand-in SDK, and the
 * sign-in benchmark. Like the node emulator, it shares no code with packages/pocketnet-client/: a
 * verifier checked against its own encoding would hide its own bugs.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import bs58check from 'bs58check'

export type SignatureObject = { nonce: string, signature: string, pubkey: string, address: string, v: number }

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

/** The host's `hexEncode` of a session: UTF-16 code units above 0xFF lowered by 0x350, each as at least two hex digits. */
function hexEncode (text: string): string {
  return Array.from({ length: text.length }, (_, i) => {
    const unit = text.charCodeAt(i)
    return (unit > 0xFF ? unit - 0x350 : unit).toString(16).padStart(2, '0')
  }).join('')
}

/** A private key made from `seed`, the same on every run. */
export const testKey = (seed: string): Uint8Array => sha256(new TextEncoder().encode(seed))

/** The address of `key` (0x37 mainnet, 0x41 testnet). */
export function addressOf (key: Uint8Array, version = 0x37): string {
  return bs58check.encode(Uint8Array.from([version, ...ripemd160(sha256(secp256k1.getPublicKey(key, true)))]))
}

export interface HostSignOptions {
  key: Uint8Array
  /** The signer's clock, ms since the epoch. */
  issued: number
  /** Lifetime in seconds: 360 for `sdk.sign`, 1280 for `account()`. */
  exp?: number
  /** Address version: 0x37 mainnet (default), 0x41 testnet. */
  version?: number
}

/** What the host's `signature(session, exp)` returns. */
export function hostSignature (session: string, options: HostSignOptions): SignatureObject {
  const nonce = `date=${new Date(options.issued).toISOString()},exp=${options.exp ?? 360},s=${hexEncode(session)}`
  const signature = secp256k1.sign(sha256(new TextEncoder().encode(nonce)), options.key, { prehash: false, lowS: true })
  return { nonce, signature: hex(signature), pubkey: hex(secp256k1.getPublicKey(options.key, true)), address: addressOf(options.key, options.version), v: 1 }
}

/** `sdk.sign(text)` of a mini-app with id `appId`: the session is `<text>/<appId>`. */
export function sdkSign (text: string, appId: string, options: HostSignOptions): SignatureObject {
  return hostSignature(text === '' ? appId : `${text}/${appId}`, options)
}

/**
 * The JSON body the host's signed fetch (`sdk.fetch(url, data)`, its `authFetch` action) builds:
 * the mini-app's `data` with `signature` set to a signature of the session `<appId>` for 360 s.
 * (The host then hands that text to `fetch` under an option `fetch` does not read: as written, the
 * body is never sent. docs/bastyon-signatures.md, "The host's signed fetch".)
 */
export function signedFetchBody (appId: string, data: Record<string, unknown>, options: Omit<HostSignOptions, 'exp'>): Record<string, unknown> {
  return { ...data, signature: hostSignature(appId, { ...options, exp: 360 }) }
}

const CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141n

/** The high-S twin of a valid signature: (r, n − s), which verifies too unless low-S is required. */
export function highSTwin (object: SignatureObject): SignatureObject {
  const s = BigInt(`0x${object.signature.slice(64)}`)
  return { ...object, signature: object.signature.slice(0, 64) + (CURVE_ORDER - s).toString(16).padStart(64, '0') }
}
