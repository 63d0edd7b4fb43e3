/**
 * How an RPC method is described, and how a call becomes the node's positional `params`.
 *
 * A Pocketnet node reads params by position, so each method states its slots in the node's
 * order with their wire types, and {@link encodeParams} builds the array from that table,
 * never from object key order (the older SDK's `Object.values(params)` bug).
 */
import type { PocketnetNetwork } from '../address.js'

/**
 * Wire types of a positional slot.
 * - `string`: sent as is.
 * - `url-encoded`: the node URL-decodes it, so send `encodeURIComponent(value)`.
 * - `int32`: a 32-bit integer. Nodes 0.22.1 and later read it only as a JSON integer; older
 *   nodes read it only as a decimal string. Either way the wrong form is silently ignored.
 * - `address-or-list`: one address string, or an array of them.
 */
export type WireType = 'string' | 'url-encoded' | 'int32' | 'address-or-list'

export interface ParamSlot {
  /** The node's name for the slot (docs/pocketnet-node.md, "Methods"). */
  name: string
  wire: WireType
  /** Sent when the slot is empty but a later slot is filled (positions cannot be skipped). */
  fill?: string | number
}

/** What validation needs to know of the client: which network's addresses are valid. */
export interface CallContext {
  network: PocketnetNetwork
}

/** Values for the slots, by slot name, after the library-level meaning has been applied. */
export type WireValues = Record<string, unknown>

/** One RPC method: its slots, and how typed params and results map to and from the wire. */
export interface MethodSpec<Params, Result> {
  name: string
  slots: readonly ParamSlot[]
  /** Validates typed params (throwing RpcInvalidParamsError) and gives the slot values. */
  toWire (params: Params, context: CallContext): WireValues
  /** Turns the node's `result` into the typed result; throws RpcTransportError on a malformed answer. */
  fromWire (result: unknown, params: Params, wire: WireValues): Result
}

/** The first node release that reads paging numbers as JSON integers instead of strings. */
const INTEGER_PAGING_SINCE: readonly number[] = [0, 22, 1]

/** True for nodes older than 0.22.1, which want int32 slots as strings. Unknown versions count as current. */
export function wantsStringIntegers (version: string | undefined): boolean {
  if (!version) return false
  // Asked on every call with one of a few versions: remember the last answer.
  if (version === lastVersion) return lastAnswer
  lastAnswer = isBeforeIntegerPaging(version)
  lastVersion = version
  return lastAnswer
}

let lastVersion: string | undefined
let lastAnswer = false

function isBeforeIntegerPaging (version: string): boolean {
  const parts = version.split('.').map(part => Number.parseInt(part, 10))
  for (let i = 0; i < INTEGER_PAGING_SINCE.length; i++) {
    const have = parts[i] ?? 0
    const since = INTEGER_PAGING_SINCE[i] ?? 0
    if (Number.isNaN(have)) return false
    if (have !== since) return have < since
  }
  return false
}

/**
 * Builds the positional `params` for one node. Trailing empty slots are left out (a sixth
 * `search` element must be a valid address, so it is sent only when filtering by author);
 * an empty slot before a filled one gets its `fill` value.
 */
export function encodeParams (slots: readonly ParamSlot[], values: WireValues, nodeVersion?: string): unknown[] {
  let last = -1
  for (let i = 0; i < slots.length; i++) {
    if (values[(slots[i] as ParamSlot).name] !== undefined) last = i
  }
  const legacy = wantsStringIntegers(nodeVersion)
  const params: unknown[] = new Array(last + 1)
  for (let i = 0; i <= last; i++) {
    const slot = slots[i] as ParamSlot
    const value = values[slot.name] ?? slot.fill
    params[i] = encodeValue(slot.wire, value, legacy)
  }
  return params
}

function encodeValue (wire: WireType, value: unknown, legacy: boolean): unknown {
  switch (wire) {
    case 'url-encoded': return encodeURIComponent(String(value))
    case 'int32': return legacy ? String(value) : value
    default: return value
  }
}

export const INT32_MAX = 2 ** 31 - 1
