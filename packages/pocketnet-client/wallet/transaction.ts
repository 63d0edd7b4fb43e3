/**
 * A Pocketnet transaction and its bytes. Pocketnet keeps Bitcoin's legacy serialization with one
 * more field, a 4-byte little-endian `nTime` (unix seconds) right after the version:
 * version, nTime, inputs, outputs, lockTime. The app signs no witness, so none is written; bytes
 * that hold one (the segwit marker) are refused rather than half read.
 *
 * Why no transaction library: @scure/btc-signer and bitcoinjs-lib both serialize and hash for
 * signing Bitcoin's layout, with no place for nTime, so the two parts that matter (the bytes and
 * the signature hash) would be ours anyway; what they would still give (P2PKH scripts, WIF,
 * addresses) is a few lines over @noble/curves, @noble/hashes and bs58check, which the package
 * already depends on, where bitcoinjs-lib would bring a second major of @noble/hashes and five
 * more packages. docs/wallet.md, "Library".
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { ByteReader, ByteWriter } from './byte-stream.js'
import { WalletError } from './errors.js'

export interface TransactionInput {
  /** The spent output's transaction, as nodes print txids (big-endian hex). */
  txid: string
  vout: number
  scriptSig: Uint8Array
  sequence: number
}

export interface TransactionOutput {
  /** Integer satoshi. */
  amountSat: number
  scriptPubKey: Uint8Array
}

export interface Transaction {
  version: number
  /** Unix seconds: Pocketnet's own field. */
  nTime: number
  inputs: TransactionInput[]
  outputs: TransactionOutput[]
  lockTime: number
}

/** The sequence that opts out of replacement and lock time, as the node's wallet writes it. */
export const FINAL_SEQUENCE = 0xffffffff
const TXID = /^[0-9a-f]{64}$/
const HEX = /^(?:[0-9a-f]{2})+$/i

/** The bytes of `tx`. @throws WalletError `WALLET_ERR_TRANSACTION` for a field out of range. */
export function encodeTransaction (tx: Transaction): Uint8Array {
  checkTransaction(tx)
  const writer = new ByteWriter().int32(tx.version).uint32(tx.nTime)
  writer.compactSize(tx.inputs.length)
  for (const input of tx.inputs) writer.raw(txidBytes(input.txid)).uint32(input.vout).varBytes(input.scriptSig).uint32(input.sequence)
  writer.compactSize(tx.outputs.length)
  for (const output of tx.outputs) writer.int64(output.amountSat).varBytes(output.scriptPubKey)
  return writer.uint32(tx.lockTime).toBytes()
}

/** {@link encodeTransaction} as hex, what `sendrawtransaction` takes. */
export function encodeTransactionHex (tx: Transaction): string {
  return bytesToHex(encodeTransaction(tx))
}

/**
 * The transaction `hex` (or bytes) holds.
 * @throws WalletError `WALLET_ERR_TRANSACTION` for bytes that are not one whole transaction.
 */
export function decodeTransaction (hexOrBytes: string | Uint8Array): Transaction {
  const reader = new ByteReader(bytesOf(hexOrBytes))
  const version = reader.int32('the version')
  const nTime = reader.uint32('nTime')
  const inputCount = reader.compactSize('the input count')
  if (inputCount === 0) throw new WalletError('WALLET_ERR_TRANSACTION', 'the transaction has no input, or a witness marker, which the wallet does not read')
  const inputs: TransactionInput[] = []
  for (let i = 0; i < inputCount; i++) {
    const hash = reader.raw(32, `input ${i}'s txid`)
    const vout = reader.uint32(`input ${i}'s vout`)
    const scriptSig = reader.varBytes(`input ${i}'s scriptSig`)
    inputs.push({ txid: bytesToHex(hash.reverse()), vout, scriptSig, sequence: reader.uint32(`input ${i}'s sequence`) })
  }
  const outputCount = reader.compactSize('the output count')
  const outputs: TransactionOutput[] = []
  for (let i = 0; i < outputCount; i++) outputs.push({ amountSat: reader.int64(`output ${i}'s amount`), scriptPubKey: reader.varBytes(`output ${i}'s script`) })
  const lockTime = reader.uint32('the lock time')
  if (reader.remaining !== 0) throw new WalletError('WALLET_ERR_TRANSACTION', `${reader.remaining} bytes follow the transaction`)
  return { version, nTime, inputs, outputs, lockTime }
}

/** The txid of a transaction's bytes: double SHA-256, printed byte-reversed, as nodes print it. */
export function transactionId (hexOrBytes: string | Uint8Array): string {
  return bytesToHex(sha256(sha256(bytesOf(hexOrBytes))).reverse())
}

function bytesOf (hexOrBytes: string | Uint8Array): Uint8Array {
  if (hexOrBytes instanceof Uint8Array) return hexOrBytes
  if (typeof hexOrBytes !== 'string' || !HEX.test(hexOrBytes)) throw new WalletError('WALLET_ERR_TRANSACTION', 'a transaction is given as bytes or as an even number of hex digits')
  return hexToBytes(hexOrBytes)
}

/** A txid's 32 bytes in the order the wire holds them (reversed from how it is printed). */
export function txidBytes (txid: string): Uint8Array {
  if (!TXID.test(txid)) throw new WalletError('WALLET_ERR_TRANSACTION', `a txid is 64 lowercase hex digits, not ${JSON.stringify(String(txid).slice(0, 80))}`)
  return hexToBytes(txid).reverse()
}

function isUint32 (value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 0xffffffff
}

function checkTransaction (tx: Transaction): void {
  const fail = (why: string): never => { throw new WalletError('WALLET_ERR_TRANSACTION', why) }
  if (!Number.isInteger(tx.version) || tx.version < -(2 ** 31) || tx.version >= 2 ** 31) fail(`the version ${tx.version} is not a 32-bit integer`)
  if (!isUint32(tx.nTime)) fail(`nTime ${tx.nTime} is not unix seconds in 32 bits`)
  if (!isUint32(tx.lockTime)) fail(`the lock time ${tx.lockTime} is not a 32-bit unsigned integer`)
  if (tx.inputs.length === 0) fail('a transaction needs an input')
  tx.inputs.forEach((input, i) => {
    if (!isUint32(input.vout) || !isUint32(input.sequence)) fail(`input ${i}'s vout or sequence is not a 32-bit unsigned integer`)
  })
  tx.outputs.forEach((output, i) => {
    if (!Number.isSafeInteger(output.amountSat) || output.amountSat < 0) fail(`output ${i}'s amount ${output.amountSat} is not a safe non-negative integer of satoshi`)
  })
}
