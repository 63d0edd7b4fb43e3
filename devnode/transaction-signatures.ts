/**
 * The script check of a pay-to-public-key-hash input, as the node runs it with its mandatory
 * flags (strict DER, strict encodings, a failed signature must be empty): the scriptSig pushes a
 * signature and a public key, the key hashes to the spent output's hash, and the signature signs
 * the legacy signature hash of the transaction with SIGHASH_ALL. The answer is the node's reason,
 * word for word, for `mandatory-script-verify-flag-failed (<reason>)`.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { doubleSha256, serializeTransaction, type RawTransaction } from './raw-transaction.js'

const SIGHASH_ALL = 1

/** The pushes of a push-only script, or undefined when it holds anything else. */
export function pushesOf (script: Uint8Array): Uint8Array[] | undefined {
  const pushes: Uint8Array[] = []
  let at = 0
  while (at < script.length) {
    const opcode = script[at++] as number
    let length: number
    if (opcode === 0) length = 0
    else if (opcode < 0x4c) length = opcode
    else if (opcode === 0x4c) length = script[at++] ?? -1
    else if (opcode === 0x4d) {
      length = at + 2 <= script.length ? Buffer.from(script.subarray(at, at + 2)).readUInt16LE(0) : -1
      at += 2
    } else return undefined
    if (length < 0 || at + length > script.length) return undefined
    pushes.push(script.subarray(at, at + length))
    at += length
  }
  return pushes
}

/** BIP 66's strict DER, with the hash type byte at the end (the node's IsValidSignatureEncoding). */
function isStrictDer (signature: Uint8Array): boolean {
  const length = signature.length
  if (length < 9 || length > 73) return false
  if (signature[0] !== 0x30 || signature[1] !== length - 3) return false
  const lengthR = signature[3] as number
  if (5 + lengthR >= length) return false
  const lengthS = signature[5 + lengthR] as number
  if (lengthR + lengthS + 7 !== length) return false
  if (signature[2] !== 0x02 || lengthR === 0 || ((signature[4] as number) & 0x80) !== 0) return false
  if (lengthR > 1 && signature[4] === 0 && ((signature[5] as number) & 0x80) === 0) return false
  const startS = lengthR + 6
  if (signature[lengthR + 4] !== 0x02 || lengthS === 0 || ((signature[startS] as number) & 0x80) !== 0) return false
  if (lengthS > 1 && signature[startS] === 0 && ((signature[startS + 1] as number) & 0x80) === 0) return false
  return true
}

/** The legacy signature hash of input `index` spending an output with `scriptCode`. */
export function signatureHash (transaction: RawTransaction, index: number, scriptCode: Uint8Array, hashType: number): Uint8Array {
  const empty = new Uint8Array(0)
  const body = serializeTransaction(transaction, each => each === index ? scriptCode : empty)
  const type = Buffer.alloc(4)
  type.writeUInt32LE(hashType)
  return doubleSha256(Buffer.concat([body, type]))
}

/** The 20-byte hash a P2PKH script pays to, or undefined for any other script. */
export function payToPubkeyHash (script: Uint8Array): Uint8Array | undefined {
  const isP2pkh = script.length === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[2] === 0x14 && script[23] === 0x88 && script[24] === 0xac
  return isP2pkh ? script.subarray(3, 23) : undefined
}

/**
 * Why input `index` fails its script check, in the node's words, or undefined when it passes.
 * `spentScript` is the P2PKH script of the output it spends.
 */
export function scriptFailure (transaction: RawTransaction, index: number, spentScript: Uint8Array): string | undefined {
  const input = transaction.inputs[index]
  const expectedHash = payToPubkeyHash(spentScript)
  if (input === undefined || expectedHash === undefined) return 'Script evaluated without error but finished with a false/empty top stack element'
  const pushes = pushesOf(input.scriptSig)
  if (pushes === undefined) return 'Only push operators allowed in signatures'
  // OP_DUP on too few items, or a stack left with more than the result (CLEANSTACK is not mandatory: two items suffice).
  if (pushes.length < 2) return 'Operation not valid with the current stack size'
  const signature = pushes.at(-2) as Uint8Array
  const pubkey = pushes.at(-1) as Uint8Array
  const keyHash = ripemd160(sha256(pubkey))
  if (Buffer.compare(Buffer.from(keyHash), Buffer.from(expectedHash)) !== 0) return 'Script failed an OP_EQUALVERIFY operation'
  if (signature.length === 0) return 'Script evaluated without error but finished with a false/empty top stack element'
  if (!isStrictDer(signature)) return 'Non-canonical DER signature'
  const hashType = signature.at(-1) as number
  if ((hashType & ~0x80) < 1 || (hashType & ~0x80) > 3) return 'Signature hash type missing or not understood'
  const compressed = pubkey.length === 33 && (pubkey[0] === 0x02 || pubkey[0] === 0x03)
  const uncompressed = pubkey.length === 65 && pubkey[0] === 0x04
  if (!compressed && !uncompressed) return 'Public key is neither compressed or uncompressed'
  // Only SIGHASH_ALL is modelled: the other types sign other hashes, which the emulator does not compute.
  if (hashType !== SIGHASH_ALL) return 'Signature must be zero for failed CHECK(MULTI)SIG operation'
  const hash = signatureHash(transaction, index, spentScript, hashType)
  let valid = false
  try {
    valid = secp256k1.verify(signature.subarray(0, -1), hash, pubkey, { prehash: false, lowS: false, format: 'der' })
  } catch {
    valid = false
  }
  return valid ? undefined : 'Signature must be zero for failed CHECK(MULTI)SIG operation'
}

const HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0n

/** Whether a DER signature's S is above half the curve order: refused by the node's policy (not by consensus). */
export function hasHighS (signature: Uint8Array): boolean {
  const lengthR = signature[3] as number
  const lengthS = signature[5 + lengthR] as number
  const s = BigInt(`0x${Buffer.from(signature.subarray(6 + lengthR, 6 + lengthR + lengthS)).toString('hex') || '0'}`)
  return s > HALF_ORDER
}
