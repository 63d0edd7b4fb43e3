/**
 * The emulator's own reading of a Pocketnet transaction's bytes: Bitcoin's legacy serialization
 * with a 4-byte little-endian `nTime` right after the version, and no witness. Written from the
 * node's rules, not from packages/pocketnet-client/: the emulator checks the client's encoding, so
 * it must not share it.
 */
import { sha256 } from '@noble/hashes/sha2.js'

export interface RawInput {
  /** The spent output's transaction, as txids are written (byte-reversed hex). */
  txid: string
  vout: number
  scriptSig: Uint8Array
  sequence: number
}

export interface RawOutput {
  /** Satoshi. */
  value: bigint
  script: Uint8Array
}

export interface RawTransaction {
  version: number
  /** Seconds since the epoch: Pocketnet's field. */
  time: number
  inputs: RawInput[]
  outputs: RawOutput[]
  lockTime: number
}

/** Bytes that are not a whole transaction. */
export class DecodeError extends Error {}

class Reader {
  #offset = 0
  constructor (readonly bytes: Uint8Array) {}

  get done (): boolean {
    return this.#offset === this.bytes.length
  }

  take (length: number): Uint8Array {
    if (length > this.bytes.length - this.#offset) throw new DecodeError('past the end')
    const slice = this.bytes.subarray(this.#offset, this.#offset + length)
    this.#offset += length
    return slice
  }

  uint32 (): number {
    return Buffer.from(this.take(4)).readUInt32LE(0)
  }

  /** A CompactSize count, canonical as the node requires. */
  count (): number {
    const first = this.take(1)[0] as number
    if (first < 0xfd) return first
    const size = first === 0xfd ? 2 : first === 0xfe ? 4 : 8
    const value = Buffer.from(this.take(size)).readUIntLE(0, Math.min(size, 6))
    if (size === 8 || value < (size === 2 ? 0xfd : size === 4 ? 0x10000 : 0)) throw new DecodeError('non-canonical size')
    // The node's MAX_SIZE: no count or script can be larger.
    if (value > 0x02000000) throw new DecodeError('size too large')
    return value
  }
}

const reversedHex = (bytes: Uint8Array): string => Buffer.from(bytes).reverse().toString('hex')

/** Decodes hex as the node's `DecodeHexTx` does for a Pocketnet transaction; throws DecodeError. */
export function decodeTransaction (hex: string): RawTransaction {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new DecodeError('not hex')
  const reader = new Reader(Buffer.from(hex, 'hex'))
  const version = Buffer.from(reader.take(4)).readInt32LE(0)
  const time = reader.uint32()
  const inputCount = reader.count()
  // Zero inputs reads as the witness marker, which Pocketnet transactions never carry.
  if (inputCount === 0) throw new DecodeError('no inputs (a witness marker)')
  const inputs: RawInput[] = []
  for (let i = 0; i < inputCount; i++) {
    const txid = reversedHex(reader.take(32))
    const vout = reader.uint32()
    const scriptSig = reader.take(reader.count())
    inputs.push({ txid, vout, scriptSig, sequence: reader.uint32() })
  }
  const outputCount = reader.count()
  const outputs: RawOutput[] = []
  for (let i = 0; i < outputCount; i++) {
    const value = Buffer.from(reader.take(8)).readBigInt64LE(0)
    outputs.push({ value, script: reader.take(reader.count()) })
  }
  const lockTime = reader.uint32()
  if (!reader.done) throw new DecodeError('bytes after the transaction')
  return { version, time, inputs, outputs, lockTime }
}

function compactSize (value: number): Uint8Array {
  if (value < 0xfd) return Uint8Array.of(value)
  const buffer = Buffer.alloc(value <= 0xffff ? 3 : 5)
  buffer[0] = value <= 0xffff ? 0xfd : 0xfe
  if (value <= 0xffff) buffer.writeUInt16LE(value, 1)
  else buffer.writeUInt32LE(value, 1)
  return buffer
}

const uint32 = (value: number): Uint8Array => {
  const buffer = Buffer.alloc(4)
  buffer.writeUInt32LE(value >>> 0)
  return buffer
}

/** The transaction's bytes, each input's scriptSig replaced by `scriptOf(index)` when given (the signature hash's form). */
export function serializeTransaction (transaction: RawTransaction, scriptOf?: (index: number) => Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [uint32(transaction.version), uint32(transaction.time), compactSize(transaction.inputs.length)]
  transaction.inputs.forEach((input, index) => {
    const script = scriptOf === undefined ? input.scriptSig : scriptOf(index)
    parts.push(Buffer.from(input.txid, 'hex').reverse(), uint32(input.vout), compactSize(script.length), script, uint32(input.sequence))
  })
  parts.push(compactSize(transaction.outputs.length))
  for (const output of transaction.outputs) {
    const value = Buffer.alloc(8)
    value.writeBigInt64LE(output.value)
    parts.push(value, compactSize(output.script.length), output.script)
  }
  parts.push(uint32(transaction.lockTime))
  return Buffer.concat(parts)
}

export const doubleSha256 = (bytes: Uint8Array): Uint8Array => sha256(sha256(bytes))

/** The txid: the double SHA-256 of the bytes, written byte-reversed. */
export function txidOf (bytes: Uint8Array): string {
  return reversedHex(doubleSha256(bytes))
}
