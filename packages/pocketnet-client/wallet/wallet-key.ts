/**
 * The app's wallet key from its WIF text (what `dumpprivkey` prints): Base58Check of a version
 * byte, the 32-byte secret and, for a compressed public key, a 0x01 flag. The version bytes are the
 * node's SECRET_KEY prefixes: 33 on mainnet, 30 on testnet, 239 on regtest (WIF "c…" there, as
 * Bitcoin's test networks). Uncompressed keys are refused: every key the node's wallet makes
 * today is compressed, and an uncompressed one has another address, which would be easy to fund
 * by mistake and hard to notice.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import bs58check from 'bs58check'
import { ADDRESS_VERSION, NETWORK_NAME, POCKETNET_NETWORKS, type PocketnetNetwork } from '../address.js'
import { WalletError } from './errors.js'

/** WIF version bytes (the node's chain parameters, SECRET_KEY). */
export const WIF_VERSION: Readonly<Record<PocketnetNetwork, number>> = { main: 33, test: 30, regtest: 239 }

const COMPRESSED_FLAG = 0x01
const SECRET_BYTES = 32

export interface WalletKey {
  readonly network: PocketnetNetwork
  /** Not enumerable: JSON, logs and `{ ...key }` leave it out. */
  readonly privateKey: Uint8Array
  /** 33 bytes, compressed. */
  readonly publicKey: Uint8Array
  /** RIPEMD-160 of SHA-256 of the public key: what the key's P2PKH outputs lock to. */
  readonly publicKeyHash: Uint8Array
  /** The key's P2PKH address on its network. */
  readonly address: string
}

/**
 * The key `wif` holds, checked against `network`.
 * @throws WalletError `WALLET_ERR_KEY` naming the rule broken; the message never holds the key.
 */
export function walletKeyFromWif (wif: string, network: PocketnetNetwork): WalletKey {
  if (typeof wif !== 'string') throw new WalletError('WALLET_ERR_KEY', `a WIF private key is a string, not ${typeof wif}`)
  let payload: Uint8Array
  try {
    payload = bs58check.decode(wif.trim())
  } catch {
    throw new WalletError('WALLET_ERR_KEY', 'the private key is not Base58Check text with a valid checksum')
  }
  const version = payload[0]
  if (version !== WIF_VERSION[network]) {
    const other = POCKETNET_NETWORKS.find(candidate => WIF_VERSION[candidate] === version)
    const what = other === undefined ? `version byte ${version}` : `a ${NETWORK_NAME[other]} key`
    throw new WalletError('WALLET_ERR_KEY', `the private key is ${what}, not a ${NETWORK_NAME[network]} key (version byte ${WIF_VERSION[network]})`)
  }
  if (payload.length === 1 + SECRET_BYTES) throw new WalletError('WALLET_ERR_KEY', 'the private key is for an uncompressed public key: export a compressed one (WIF of 52 characters)')
  if (payload.length !== 2 + SECRET_BYTES || payload[1 + SECRET_BYTES] !== COMPRESSED_FLAG) {
    throw new WalletError('WALLET_ERR_KEY', `the private key has ${payload.length} bytes, not a version byte, 32 bytes and the compression flag`)
  }
  const privateKey = payload.slice(1, 1 + SECRET_BYTES)
  if (!secp256k1.utils.isValidSecretKey(privateKey)) throw new WalletError('WALLET_ERR_KEY', 'the private key is zero or not below the order of secp256k1')
  return keyOfSecret(privateKey, network)
}

/** The wallet key of a 32-byte secret (for tests and tools that make keys; the app reads WIF). */
export function keyOfSecret (privateKey: Uint8Array, network: PocketnetNetwork): WalletKey {
  const publicKey = secp256k1.getPublicKey(privateKey, true)
  const publicKeyHash = hash160(publicKey)
  const address = bs58check.encode(Uint8Array.of(ADDRESS_VERSION[network], ...publicKeyHash))
  const key = { network, publicKey, publicKeyHash, address } as WalletKey
  // Not enumerable: a key logged, spread or turned into JSON by mistake shows no secret.
  return Object.defineProperty(key, 'privateKey', { value: privateKey, enumerable: false })
}

/** RIPEMD-160 of SHA-256: a public key's hash in P2PKH scripts and addresses. */
export function hash160 (bytes: Uint8Array): Uint8Array {
  return ripemd160(sha256(bytes))
}
