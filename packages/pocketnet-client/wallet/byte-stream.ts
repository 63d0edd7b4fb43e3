/**
 * Bitcoin's wire encoding of the few types a transaction holds: little-endian integers, the
 * variable-length count ("CompactSize") and length-prefixed byte strings. Reading refuses what is
 * truncated or not minimally encoded, as the node does.
 */
import { WalletError } from './errors.js'

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** Appends values to a growing byte array. */
export class ByteWriter {
  #bytes = new Uint8Array(256)
  #length = 0

  #room (size: number): DataView {
    if (this.#length + size > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + size))
      grown.set(this.#bytes.subarray(0, this.#length))
      this.#bytes = grown
    }
    const view = new DataView(this.#bytes.buffer, this.#length, size)
    this.#length += size
    return view
  }

  uint32 (value: number): this {
    this.#room(4).setUint32(0, value, true)
    return this
  }

  int32 (value: number): this {
    this.#room(4).setInt32(0, value, true)
    return this
  }

  /** A satoshi amount: a safe non-negative integer, as int64. */
  int64 (value: number): this {
    this.#room(8).setBigInt64(0, BigInt(value), true)
    return this
  }

  compactSize (value: number): this {
    if (value < 0xfd) {
      this.#room(1).setUint8(0, value)
    } else if (value <= 0xffff) {
      const view = this.#room(3)
      view.setUint8(0, 0xfd)
      view.setUint16(1, value, true)
    } else {
      const view = this.#room(5)
      view.setUint8(0, 0xfe)
      view.setUint32(1, value, true)
    }
    return this
  }

  raw (bytes: Uint8Array): this {
    this.#room(bytes.length)
    this.#bytes.set(bytes, this.#length - bytes.length)
    return this
  }

  /** A length, then the bytes. */
  varBytes (bytes: Uint8Array): this {
    return this.compactSize(bytes.length).raw(bytes)
  }

  toBytes (): Uint8Array {
    return this.#bytes.slice(0, this.#length)
  }
}

/** Reads values in order from bytes; every read past the end is a WalletError. */
export class ByteReader {
  readonly #bytes: Uint8Array
  readonly #view: DataView
  #at = 0

  constructor (bytes: Uint8Array) {
    this.#bytes = bytes
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  get remaining (): number {
    return this.#bytes.length - this.#at
  }

  #take (size: number, what: string): number {
    if (this.#at + size > this.#bytes.length) throw new WalletError('WALLET_ERR_TRANSACTION', `the transaction ends inside ${what} (byte ${this.#at} of ${this.#bytes.length})`)
    const at = this.#at
    this.#at += size
    return at
  }

  uint8 (what: string): number {
    return this.#view.getUint8(this.#take(1, what))
  }

  uint32 (what: string): number {
    return this.#view.getUint32(this.#take(4, what), true)
  }

  int32 (what: string): number {
    return this.#view.getInt32(this.#take(4, what), true)
  }

  /** An int64 amount; refused when negative or beyond a safe integer. */
  int64 (what: string): number {
    const value = this.#view.getBigInt64(this.#take(8, what), true)
    if (value < 0n || value > MAX_SAFE) throw new WalletError('WALLET_ERR_TRANSACTION', `${what} is ${value}, not a safe non-negative amount`)
    return Number(value)
  }

  compactSize (what: string): number {
    const first = this.uint8(what)
    if (first < 0xfd) return first
    if (first === 0xff) throw new WalletError('WALLET_ERR_TRANSACTION', `${what} is a count of 8 bytes, more than a transaction can hold`)
    const value = first === 0xfd ? this.#view.getUint16(this.#take(2, what), true) : this.#view.getUint32(this.#take(4, what), true)
    // The node refuses a count written longer than it needs to be ("non-canonical").
    if (value < (first === 0xfd ? 0xfd : 0x10000)) throw new WalletError('WALLET_ERR_TRANSACTION', `${what} is not minimally encoded`)
    return value
  }

  raw (size: number, what: string): Uint8Array {
    const at = this.#take(size, what)
    return this.#bytes.slice(at, at + size)
  }

  varBytes (what: string): Uint8Array {
    return this.raw(this.compactSize(`the length of ${what}`), what)
  }
}
