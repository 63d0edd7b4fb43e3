/**
 * Pocketnet addresses: Base58Check, 34 characters, version byte 0x37 on mainnet ("P…"), 0x41 on
 * testnet ("T…") and 111 on regtest ("m…" or "n…", as Bitcoin's test networks). Checking the
 * checksum here tells a typo from an unknown account without asking a node. See
 * docs/pocketnet-node.md, "Addresses".
 */
import bs58check from 'bs58check'

export type PocketnetNetwork = 'main' | 'test' | 'regtest'

/** Every network, in the order messages list them. */
export const POCKETNET_NETWORKS: readonly PocketnetNetwork[] = ['main', 'test', 'regtest']

/** Base58Check version bytes of pay-to-public-key-hash addresses. */
export const ADDRESS_VERSION: Readonly<Record<PocketnetNetwork, number>> = { main: 0x37, test: 0x41, regtest: 111 }
/** The first characters a version byte gives 34-character addresses. */
const ADDRESS_PREFIXES: Readonly<Record<PocketnetNetwork, readonly string[]>> = { main: ['P'], test: ['T'], regtest: ['m', 'n'] }
/** The network's name in messages. */
export const NETWORK_NAME: Readonly<Record<PocketnetNetwork, string>> = { main: 'mainnet', test: 'testnet', regtest: 'regtest' }
const ADDRESS_LENGTH = 34
/** Version byte + 20-byte hash. */
const PAYLOAD_BYTES = 21
const BASE58_CHARS = /^[1-9A-HJ-NP-Za-km-z]+$/

/** True when `value` is a well-formed address of `network` (default mainnet) with a valid checksum. */
export function isPocketnetAddress (value: unknown, network: PocketnetNetwork = 'main'): value is string {
  if (typeof value !== 'string' || value.length !== ADDRESS_LENGTH || !ADDRESS_PREFIXES[network].includes(value[0] as string)) return false
  if (!BASE58_CHARS.test(value)) return false
  const payload = bs58check.decodeUnsafe(value)
  return payload !== undefined && payload.length === PAYLOAD_BYTES && payload[0] === ADDRESS_VERSION[network]
}

/** One sentence a person can act on, for error messages: the rule for `network`'s addresses. */
export function addressRule (network: PocketnetNetwork = 'main'): string {
  const starts = ADDRESS_PREFIXES[network].map(prefix => `"${prefix}"`).join(' or ')
  return `a Pocketnet ${network === 'main' ? '' : `${NETWORK_NAME[network]} `}address: 34 Base58 characters starting with ${starts}, with a valid checksum`
}

/** The network whose addresses have `version`, if any. */
export function networkOfVersion (version: number | undefined): PocketnetNetwork | undefined {
  return POCKETNET_NETWORKS.find(network => ADDRESS_VERSION[network] === version)
}

/** The rule for mainnet addresses, the default. */
export const POCKETNET_ADDRESS_RULE = addressRule('main')

/**
 * The 21 bytes `address` encodes (its version byte and its key's hash), for a format that must be
 * short (a Telegram deep link's start parameter); undefined unless it is an address of one of the
 * networks with a valid checksum.
 */
export function addressBytes (address: string): Uint8Array | undefined {
  const network = POCKETNET_NETWORKS.find(candidate => isPocketnetAddress(address, candidate))
  return network === undefined ? undefined : bs58check.decode(address)
}

/** The address of 21 bytes from {@link addressBytes}; undefined when they are no address of a network. */
export function addressFromBytes (bytes: Uint8Array): string | undefined {
  if (bytes.length !== PAYLOAD_BYTES || networkOfVersion(bytes[0]) === undefined) return undefined
  return bs58check.encode(bytes)
}
