/**
 * Pocketnet addresses: Base58Check, 34 characters, version byte 0x37 on mainnet ("P…") and 0x41
 * on testnet ("T…"). Checking the checksum here tells a typo from an unknown account without
 * asking a node. See docs/pocketnet-node.md, "Addresses".
 */
import bs58check from 'bs58check'

export type PocketnetNetwork = 'main' | 'test'

/** Base58Check version bytes of pay-to-public-key-hash addresses. */
export const ADDRESS_VERSION: Readonly<Record<PocketnetNetwork, number>> = { main: 0x37, test: 0x41 }
const ADDRESS_PREFIX: Readonly<Record<PocketnetNetwork, string>> = { main: 'P', test: 'T' }
const ADDRESS_LENGTH = 34
/** Version byte + 20-byte hash. */
const PAYLOAD_BYTES = 21
const BASE58_CHARS = /^[1-9A-HJ-NP-Za-km-z]+$/

/** True when `value` is a well-formed address of `network` (default mainnet) with a valid checksum. */
export function isPocketnetAddress (value: unknown, network: PocketnetNetwork = 'main'): value is string {
  if (typeof value !== 'string' || value.length !== ADDRESS_LENGTH || value[0] !== ADDRESS_PREFIX[network]) return false
  if (!BASE58_CHARS.test(value)) return false
  const payload = bs58check.decodeUnsafe(value)
  return payload !== undefined && payload.length === PAYLOAD_BYTES && payload[0] === ADDRESS_VERSION[network]
}

/** One sentence a person can act on, for error messages: the rule for `network`'s addresses. */
export function addressRule (network: PocketnetNetwork = 'main'): string {
  return `a Pocketnet ${network === 'main' ? '' : 'testnet '}address: 34 Base58 characters starting with "${ADDRESS_PREFIX[network]}", with a valid checksum`
}

/** The rule for mainnet addresses, the default. */
export const POCKETNET_ADDRESS_RULE = addressRule('main')
