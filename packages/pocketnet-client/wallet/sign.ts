/**
 * Signing P2PKH inputs with SIGHASH_ALL, as Pocketnet checks them: Bitcoin's legacy signature
 * hash, whose serialization also carries nTime after the version (the node's
 * CTransactionSignatureSerializer): version, nTime, every input with an empty script but the one
 * signed, which carries the spent output's script, every output, the lock time, then the hash type
 * as 4 bytes; double SHA-256. Signatures are DER with a low S (the node's standardness rule) and
 * RFC 6979 nonces, so signing the same transaction again gives the same bytes.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { ByteWriter } from './byte-stream.js'
import { WalletError } from './errors.js'
import { p2pkhScriptOfHash, p2pkhScriptSig } from './scripts.js'
import { txidBytes, type Transaction } from './transaction.js'
import type { WalletKey } from './wallet-key.js'

export const SIGHASH_ALL = 0x01
const EMPTY = new Uint8Array(0)

/** The 32-byte hash the signature of input `index` signs, `scriptCode` being the spent output's script. */
export function signatureHash (tx: Transaction, index: number, scriptCode: Uint8Array, hashType = SIGHASH_ALL): Uint8Array {
  if (hashType !== SIGHASH_ALL) throw new WalletError('WALLET_ERR_TRANSACTION', 'only SIGHASH_ALL is supported')
  if (!Number.isInteger(index) || index < 0 || index >= tx.inputs.length) throw new WalletError('WALLET_ERR_TRANSACTION', `there is no input ${index} to sign`)
  const writer = new ByteWriter().int32(tx.version).uint32(tx.nTime).compactSize(tx.inputs.length)
  tx.inputs.forEach((input, i) => {
    writer.raw(txidBytes(input.txid)).uint32(input.vout).varBytes(i === index ? scriptCode : EMPTY).uint32(input.sequence)
  })
  writer.compactSize(tx.outputs.length)
  for (const output of tx.outputs) writer.int64(output.amountSat).varBytes(output.scriptPubKey)
  writer.uint32(tx.lockTime).uint32(hashType)
  return sha256(sha256(writer.toBytes()))
}

/**
 * `tx` with every input signed by `key`: each must spend an output locked to the key's address
 * (the caller chose them so; a wrong one would make the node refuse the whole transaction).
 */
export function signP2pkhInputs (tx: Transaction, key: WalletKey): Transaction {
  const scriptCode = p2pkhScriptOfHash(key.publicKeyHash)
  const inputs = tx.inputs.map((input, index) => {
    const digest = signatureHash(tx, index, scriptCode)
    const der = secp256k1.sign(digest, key.privateKey, { prehash: false, lowS: true, format: 'der' })
    return { ...input, scriptSig: p2pkhScriptSig(Uint8Array.of(...der, SIGHASH_ALL), key.publicKey) }
  })
  return { ...tx, inputs }
}
