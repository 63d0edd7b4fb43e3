/**
 * What every emulated method shares: the node's errors and its three ways of reading a
 * positional param (docs/pocketnet-node.md, "Methods"). Written from the node's rules, not from
 * packages/pocketnet-client/: an emulator that reused the client's encoding would hide its bugs.
 */
import bs58check from 'bs58check'

/** A JSON-RPC error, answered with `status`. */
export class RpcError extends Error {
  constructor (readonly code: number, message: string, readonly status = 500) {
    super(message)
  }
}

export interface ChainState {
  version: string
  height: number
  blockHash: string
  blockTime: number
  /** Blocks to subtract from the height getnodeinfo reports (a lagging node). */
  lag: number
  /** What estimatesmartfee answers, satoshi per 1,000 bytes; null: no estimate; absent: the default. */
  feeRatePerKb?: number | null
}

export const INT32_MIN = -(2 ** 31)
export const INT32_MAX = 2 ** 31 - 1

/** `version` (e.g. "0.22.7") is at least `major.minor.patch`. */
export function versionAtLeast (version: string, major: number, minor: number, patch: number): boolean {
  const [a = 0, b = 0, c = 0] = version.split('.').map(Number)
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch
}

/** The JSON type names the node's messages use. */
export function typeName (value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  switch (typeof value) {
    case 'boolean': return 'bool'
    case 'number': return 'number'
    case 'string': return 'string'
    default: return 'object'
  }
}

/** An unguarded read failed: the node's runtime error, -32603 with the exception's text. */
export function runtimeError (message: string): RpcError {
  return new RpcError(-32603, message)
}

/** `get_str()`: a string, or the runtime error (a missing position reads as null). */
export function getStr (value: unknown): string {
  if (typeof value !== 'string') throw runtimeError('JSON value is not a string as expected')
  return value
}

/** `get_int()` on a JSON number: an integer within int32, or the runtime error. */
export function getInt (value: unknown): number {
  if (typeof value !== 'number') throw runtimeError('JSON value is not an integer as expected')
  if (!Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) throw runtimeError('JSON integer out of range')
  return value
}

/** `get_obj()`: an object (not an array), or the runtime error. */
export function getObj (value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw runtimeError('JSON value is not an object as expected')
  return value as Record<string, unknown>
}

type JsonType = 'string' | 'number' | 'object' | 'array' | 'bool'

/** `RPCTypeCheckArgument`: error -3 unless `value` has the type (null is a type of its own). */
export function typeCheck (value: unknown, expected: JsonType): void {
  const actual = typeName(value)
  if (actual !== expected) throw new RpcError(-3, `Expected type ${expected}, got ${actual}`)
}

/** `RPCTypeCheck(params, types)`: checks the positions that are present; missing ones pass. */
export function typeCheckParams (params: unknown[], expected: JsonType[]): void {
  expected.forEach((type, position) => {
    if (position < params.length) typeCheck(params[position], type)
  })
}

/** A well-formed mainnet address: Base58Check, version byte 0x37. */
export function isAddress (value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 34) return false
  const payload = bs58check.decodeUnsafe(value)
  return payload !== undefined && payload[0] === 0x37
}

/**
 * The error of a query SQLite refuses to prepare. The node reports SQLite's generic text for
 * the code, then the statement; `sql` stands for the statement.
 */
export function sqlPrepareError (sql: string): RpcError {
  return new RpcError(500, `SQLiteDatabase: Failed to setup SQL statements: SQL logic error\nSql: ${sql}`)
}

/** A key of an object found as the node's case-insensitive look-up finds it (the first match). */
export function keyOf (object: Record<string, unknown>, key: string): unknown {
  const lower = key.toLowerCase()
  for (const [name, value] of Object.entries(object)) if (name.toLowerCase() === lower) return value
  return undefined
}
