/**
 * The tests' own signer of Pocketnet payments: the legacy serialization with `nTime` after the
 * version, P2PKH inputs signed with SIGHASH_ALL. Shared by the emulator's tests and the contract
 * suite, which sends the same kinds of transactions to a real node; never the emulator's code nor
 * pocketnet-client's, so that neither is checked against itself. Options break one rule at a time.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import bs58check from 'bs58check'

export interface TestKey { secret: Uint8Array, pubkey: Uint8Array, address: string, script: Buffer }
export interface Spend { txid: string, vout: number, key: TestKey }
export interface Pay { script: Buffer, sat: number }
export interface SignOptions {
  /** Seconds since the epoch: the transaction's `nTime`. */
  time?: number
  version?: number
  /** The signature's S replaced by the curve order minus S (valid, but refused by policy). */
  highS?: boolean
  /** A push before the signature: valid, but leaves a stack of two. */
  extraPush?: boolean
}

/** A key made from `seed`, with its address of `version` (0x37 mainnet, 111 regtest). */
export function testKey (seed: string, version = 0x37): TestKey {
  return keyFromSecret(sha256(new TextEncoder().encode(seed)), version)
}

export function keyFromSecret (secret: Uint8Array, version = 0x37): TestKey {
  const pubkey = secp256k1.getPublicKey(secret, true)
  const hash = ripemd160(sha256(pubkey))
  return { secret, pubkey, address: bs58check.encode(Uint8Array.from([version, ...hash])), script: Buffer.concat([Buffer.from('76a914', 'hex'), hash, Buffer.from('88ac', 'hex')]) }
}

const CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141n
const u32 = (n: number): Buffer => {
  const buffer = Buffer.alloc(4)
  buffer.writeUInt32LE(n)
  return buffer
}
// Counts and scripts here stay below 0xfd.
const varint = (n: number): Buffer => Buffer.from([n])

/** The transaction's bytes with `scripts` as the inputs' scriptSigs. */
export function serialize (inputs: Spend[], outputs: Pay[], scripts: Buffer[], options: SignOptions = {}): Buffer {
  const parts = [u32(options.version ?? 2), u32(options.time ?? 1_800_000_000), varint(inputs.length)]
  inputs.forEach((input, i) => parts.push(Buffer.from(input.txid, 'hex').reverse(), u32(input.vout), varint((scripts[i] as Buffer).length), scripts[i] as Buffer, u32(0xffffffff)))
  parts.push(varint(outputs.length))
  for (const output of outputs) {
    const value = Buffer.alloc(8)
    value.writeBigInt64LE(BigInt(output.sat))
    parts.push(value, varint(output.script.length), output.script)
  }
  return Buffer.concat([...parts, u32(0)])
}

/** The signed transaction, as hex. */
export function sign (inputs: Spend[], outputs: Pay[], options: SignOptions = {}): string {
  const scriptSigs = inputs.map((input, i) => {
    const preimage = Buffer.concat([serialize(inputs, outputs, inputs.map((each, j) => j === i ? each.key.script : Buffer.alloc(0)), options), u32(1)])
    let signed = secp256k1.Signature.fromBytes(secp256k1.sign(sha256(sha256(preimage)), input.key.secret, { prehash: false, lowS: true }))
    if (options.highS) signed = new secp256k1.Signature(signed.r, CURVE_ORDER - signed.s)
    const signature = Buffer.concat([signed.toBytes('der'), Buffer.from([1])])
    const extra = options.extraPush ? Buffer.from('02abcd', 'hex') : Buffer.alloc(0)
    return Buffer.concat([extra, varint(signature.length), signature, varint(33), input.key.pubkey])
  })
  return serialize(inputs, outputs, scriptSigs, options).toString('hex')
}

/** The same transaction with no scriptSig at all. */
export const unsigned = (inputs: Spend[], outputs: Pay[], options: SignOptions = {}): string => serialize(inputs, outputs, inputs.map(() => Buffer.alloc(0)), options).toString('hex')

export const txidOf = (hex: string): string => Buffer.from(sha256(sha256(Buffer.from(hex, 'hex')))).reverse().toString('hex')

/** An OP_RETURN output script holding `text` (under 76 bytes). */
export const memoScript = (text: string): Buffer => Buffer.concat([Buffer.from([0x6a, Buffer.byteLength(text)]), Buffer.from(text)])
