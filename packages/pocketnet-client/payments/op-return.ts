/**
 * The memo of a payment: the host's `sdk.payment({message})` and its checkout write the text as
 * one OP_RETURN output, `6a` + a push of the UTF-8 bytes, which `getrawtransaction` shows as the
 * output's `scriptPubKey.hex`. Pushes longer than 75 bytes use OP_PUSHDATA1 (`4c <len>`), the
 * node's standard limit being 80 bytes of data.
 */
import { PaymentError } from './errors.js'

const OP_RETURN = 0x6a
const OP_PUSHDATA1 = 0x4c
const OP_PUSHDATA2 = 0x4d
const OP_PUSHDATA4 = 0x4e
/** The most data bytes a standard OP_RETURN output carries (the node's -datacarriersize, less the opcodes). */
export const MAX_MEMO_BYTES = 80

const HEX = /^(?:[0-9a-f]{2})*$/i
const utf8 = new TextDecoder('utf-8', { fatal: true })

function bytesOfHex (hex: string): Uint8Array | undefined {
  if (!HEX.test(hex)) return undefined
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

/**
 * The data pushes of an OP_RETURN script given as hex, in order; `undefined` when the script is
 * not OP_RETURN followed only by well-formed data pushes (a truncated push, or an opcode that
 * pushes no data, such as OP_1).
 */
export function readOpReturnPushes (scriptHex: string): Uint8Array[] | undefined {
  const script = bytesOfHex(scriptHex)
  if (script === undefined || script[0] !== OP_RETURN) return undefined
  const pushes: Uint8Array[] = []
  let at = 1
  while (at < script.length) {
    const opcode = script[at++] as number
    let length: number
    if (opcode < OP_PUSHDATA1) {
      length = opcode
    } else if (opcode === OP_PUSHDATA1) {
      length = script[at] ?? -1
      at += 1
    } else if (opcode === OP_PUSHDATA2) {
      length = at + 2 <= script.length ? (script[at] as number) | ((script[at + 1] as number) << 8) : -1
      at += 2
    } else if (opcode === OP_PUSHDATA4) {
      length = at + 4 <= script.length ? new DataView(script.buffer, at, 4).getUint32(0, true) : -1
      at += 4
    } else {
      return undefined
    }
    if (length < 0 || at + length > script.length) return undefined
    pushes.push(script.subarray(at, at + length))
    at += length
  }
  return pushes
}

/**
 * The memo an OP_RETURN script carries: its one data push, read as UTF-8. `undefined` for a
 * script that is not OP_RETURN, has no push or several (Pocketnet's social transactions push a
 * type and a hash), an empty push, or bytes that are not valid UTF-8.
 */
export function memoOfScript (scriptHex: string): string | undefined {
  const pushes = readOpReturnPushes(scriptHex)
  if (pushes?.length !== 1) return undefined
  const [data] = pushes as [Uint8Array]
  if (data.length === 0) return undefined
  try {
    return utf8.decode(data)
  } catch {
    return undefined
  }
}

/** The UTF-8 length of `memo` in bytes: what counts against {@link MAX_MEMO_BYTES}. */
export function memoByteLength (memo: string): number {
  return new TextEncoder().encode(memo).length
}

/**
 * The OP_RETURN script, as hex, that carries `memo` as the host writes it: one push of its UTF-8
 * bytes. For tests and tools that build transactions; the proof only reads.
 * @throws PaymentError `PAYMENT_ERR_EXPECTATION` for an empty memo or one over {@link MAX_MEMO_BYTES} bytes.
 */
export function memoScriptHex (memo: string): string {
  const data = new TextEncoder().encode(memo)
  if (data.length === 0 || data.length > MAX_MEMO_BYTES) throw new PaymentError('PAYMENT_ERR_EXPECTATION', `a memo is 1 to ${MAX_MEMO_BYTES} bytes of UTF-8, not ${data.length}`)
  const push = data.length < OP_PUSHDATA1 ? [data.length] : [OP_PUSHDATA1, data.length]
  return [OP_RETURN, ...push, ...data].map(byte => byte.toString(16).padStart(2, '0')).join('')
}
