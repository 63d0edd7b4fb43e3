/**
 * The rules every stored value follows, whoever writes it (a route or server code): what a key
 * (or a collection's name) may be, how a value is measured, and the quotas.
 */
import { StorageError } from './storage-errors.js'

/** A key, or a collection's name: URL-safe as it is, so it goes in a path unescaped. */
export const KEY_PATTERN = '^[A-Za-z0-9._-]{1,128}$'
export const KEY_RULE = '1 to 128 characters, each a letter, a digit, ".", "_" or "-"'
const KEY = new RegExp(KEY_PATTERN)

/** Keys in one page of a listing. */
export const MAX_LIST_LIMIT = 1000
export const DEFAULT_LIST_LIMIT = 100

/** How much one owner (a user, or a collection) may keep. */
export interface StorageLimits {
  /** Keys at most (STORAGE_MAX_KEYS). */
  maxKeys: number
  /** Bytes of one value's JSON at most (STORAGE_MAX_VALUE_BYTES). */
  maxValueBytes: number
  /** Bytes of all keys and values together at most (STORAGE_MAX_USER_BYTES). */
  maxOwnerBytes: number
}

/** Above Telegram's CloudStorage (1,024 keys of up to 4,096 characters). */
export const DEFAULT_STORAGE_LIMITS: StorageLimits = { maxKeys: 1024, maxValueBytes: 65_536, maxOwnerBytes: 1_048_576 }

export function checkKey (key: string, what = 'key'): void {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new StorageError('STORAGE_ERR_KEY_INVALID', `The ${what} must be ${KEY_RULE} (got ${JSON.stringify(String(key).slice(0, 140))})`)
  }
}

/** A value as it is stored: its JSON text, compact. */
export function storedJson (value: unknown): string {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch (error) {
    throw new StorageError('STORAGE_ERR_VALUE_INVALID', `The value cannot be written as JSON: ${(error as Error).message}`)
  }
  if (json === undefined) throw new StorageError('STORAGE_ERR_VALUE_INVALID', `The value cannot be written as JSON (${typeof value})`)
  return json
}

/** The bytes a key and its value take from their owner's quota (the database checks the same sum). */
export function sizeOf (key: string, json: string): number {
  // Keys are ASCII: their length is their bytes.
  return key.length + Buffer.byteLength(json)
}
