/**
 * The two output scripts the app writes: pay-to-public-key-hash for an address
 * (`OP_DUP OP_HASH160 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG`) and the memo's OP_RETURN (one push
 * of its UTF-8 bytes, as the host writes a payment's message); and the scriptSig that spends a
 * P2PKH output (`<DER signature + hash type> <compressed public key>`).
 */
import bs58check from 'bs58check'
import { ADDRESS_VERSION, addressRule, isPocketnetAddress, type PocketnetNetwork } from '../address.js'
import { MAX_MEMO_BYTES } from '../payments/op-return.js'
import { WalletError } from './errors.js'

const OP_DUP = 0x76
const OP_HASH160 = 0xa9
const OP_EQUALVERIFY = 0x88
const OP_CHECKSIG = 0xac
const OP_RETURN = 0x6a
const OP_PUSHDATA1 = 0x4c
const HASH_BYTES = 20

/** The P2PKH script of a 20-byte public key hash. */
export function p2pkhScriptOfHash (hash: Uint8Array): Uint8Array {
  return Uint8Array.of(OP_DUP, OP_HASH160, HASH_BYTES, ...hash, OP_EQUALVERIFY, OP_CHECKSIG)
}

/**
 * The P2PKH script paying `address`.
 * @throws WalletError `WALLET_ERR_ADDRESS` unless it is an address of `network`.
 */
export function p2pkhScript (address: string, network: PocketnetNetwork): Uint8Array {
  if (!isPocketnetAddress(address, network)) throw new WalletError('WALLET_ERR_ADDRESS', `${JSON.stringify(String(address).slice(0, 80))} is not ${addressRule(network)}`)
  return p2pkhScriptOfHash(bs58check.decode(address).subarray(1))
}

/** The address a P2PKH script pays on `network`; undefined for any other script. */
export function addressOfScript (script: Uint8Array, network: PocketnetNetwork): string | undefined {
  if (script.length !== 25 || script[0] !== OP_DUP || script[1] !== OP_HASH160 || script[2] !== HASH_BYTES || script[23] !== OP_EQUALVERIFY || script[24] !== OP_CHECKSIG) return undefined
  return bs58check.encode(Uint8Array.of(ADDRESS_VERSION[network], ...script.subarray(3, 23)))
}

/**
 * The OP_RETURN script carrying `memo`. The node relays one OP_RETURN output of at most 83 script
 * bytes (-datacarriersize), so at most 80 bytes of memo after `6a 4c <length>`.
 * @throws WalletError `WALLET_ERR_MEMO` for an empty memo or one over {@link MAX_MEMO_BYTES} bytes.
 */
export function memoScript (memo: string): Uint8Array {
  const data = new TextEncoder().encode(memo)
  if (data.length === 0 || data.length > MAX_MEMO_BYTES) throw new WalletError('WALLET_ERR_MEMO', `a memo is 1 to ${MAX_MEMO_BYTES} bytes of UTF-8, not ${data.length}`)
  return data.length < OP_PUSHDATA1 ? Uint8Array.of(OP_RETURN, data.length, ...data) : Uint8Array.of(OP_RETURN, OP_PUSHDATA1, data.length, ...data)
}

/** The scriptSig spending a P2PKH output: two pushes (both under 76 bytes, so a length byte each). */
export function p2pkhScriptSig (signature: Uint8Array, publicKey: Uint8Array): Uint8Array {
  return Uint8Array.of(signature.length, ...signature, publicKey.length, ...publicKey)
}
