/**
 * What storage refuses: a stable code for server code to match on, and the HTTP status that
 * answers it when it reaches the error handler (`{message, error, code}`).
 */
import { HttpError } from '../http/errors.js'

export const STORAGE_ERROR_CODES = {
  STORAGE_ERR_KEY_INVALID: 'A key or a collection name breaks its rule: 1 to 128 characters, each a letter, a digit, `.`, `_` or `-`.',
  STORAGE_ERR_VALUE_INVALID: 'The value is not JSON: undefined, a function, a bigint, or an object that refers to itself.',
  STORAGE_ERR_NOT_FOUND: 'No value is stored under this key.',
  STORAGE_ERR_PRECONDITION_FAILED: 'The stored version is not the one the write expected (`If-Match`), or the key exists when it had to be new (`If-None-Match: *`): nothing was written.',
  STORAGE_ERR_VALUE_TOO_LARGE: 'The value takes more bytes as JSON than `STORAGE_MAX_VALUE_BYTES`.',
  STORAGE_ERR_TOO_MANY_KEYS: 'The owner already has `STORAGE_MAX_KEYS` keys: a new key needs another deleted first.',
  STORAGE_ERR_OWNER_FULL: 'The owner\'s keys and values would take more than `STORAGE_MAX_USER_BYTES` bytes together.',
  STORAGE_ERR_NOT_ADMIN: 'Writing to a collection takes a signed-in address listed in `APP_ADMINS`.',
} as const

export type StorageErrorCode = keyof typeof STORAGE_ERROR_CODES

/** The HTTP status each refusal answers with. */
export const STORAGE_ERROR_STATUS: Record<StorageErrorCode, number> = {
  STORAGE_ERR_KEY_INVALID: 400,
  STORAGE_ERR_VALUE_INVALID: 400,
  STORAGE_ERR_NOT_FOUND: 404,
  STORAGE_ERR_PRECONDITION_FAILED: 412,
  STORAGE_ERR_VALUE_TOO_LARGE: 413,
  STORAGE_ERR_TOO_MANY_KEYS: 413,
  STORAGE_ERR_OWNER_FULL: 413,
  STORAGE_ERR_NOT_ADMIN: 403,
}

const TITLES: Record<StorageErrorCode, string> = {
  STORAGE_ERR_KEY_INVALID: 'Invalid key',
  STORAGE_ERR_VALUE_INVALID: 'Invalid value',
  STORAGE_ERR_NOT_FOUND: 'Key not found',
  STORAGE_ERR_PRECONDITION_FAILED: 'Precondition failed',
  STORAGE_ERR_VALUE_TOO_LARGE: 'Storage quota exceeded',
  STORAGE_ERR_TOO_MANY_KEYS: 'Storage quota exceeded',
  STORAGE_ERR_OWNER_FULL: 'Storage quota exceeded',
  STORAGE_ERR_NOT_ADMIN: 'Forbidden',
}

/**
 * A refusal, with its HTTP answer built in: thrown from a route (ours or the app's own, calling
 * `app.storage`), it answers its status with `{message, error, code}`. Match on `err.code`.
 */
export class StorageError extends HttpError {
  override readonly code: StorageErrorCode

  constructor (code: StorageErrorCode, detail: string) {
    super(STORAGE_ERROR_STATUS[code], TITLES[code], detail)
    this.name = 'StorageError'
    this.code = code
  }
}
