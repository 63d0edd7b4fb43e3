/**
 * Pocketnet addresses: Base58Check, 34 characters, version byte 0x37 on mainnet ("P…").
 * Checking the checksum here tells a typo from an unknown account without asking a node.
 * See docs/pocketnet-node.md, "Addresses".
 */
import bs58check from 'bs58check'

const MAINNET_VERSION = 0x37
const ADDRESS_LENGTH = 34
/** Version byte + 20-byte hash. */
const PAYLOAD_BYTES = 21
const BASE58_CHARS = /^[1-9A-HJ-NP-Za-km-z]+$/

/** True when `value` is a well-formed mainnet Pocketnet address with a valid checksum. */
export function isPocketnetAddress (value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== ADDRESS_LENGTH || value[0] !== 'P') return false
  if (!BASE58_CHARS.test(value)) return false
  const payload = bs58check.decodeUnsafe(value)
  return payload !== undefined && payload.length === PAYLOAD_BYTES && payload[0] === MAINNET_VERSION
}

/** One sentence a person can act on, for error messages. */
export const POCKETNET_ADDRESS_RULE = 'a Pocketnet address: 34 Base58 characters starting with "P", with a valid checksum'
