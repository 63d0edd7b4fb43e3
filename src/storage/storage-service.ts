/**
 * `app.storage`: values kept for each signed-in user (`forUser(address)`) and app-wide
 * collections (`collection(name)`), for the routes and for a developer's own server code, with
 * the same rules and quotas either way. Server code is trusted: it may write any user's keys and
 * any collection; who may write through HTTP is the routes' decision.
 *
 * The database opens on the first call that needs it (db/plugin.ts), not before: a service whose
 * users never store anything never loads a driver.
 */
import type { Database } from '../db/database.js'
import { StorageError } from './storage-errors.js'
import { checkKey, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, storedJson, type StorageLimits } from './storage-rules.js'
import { StorageStore, type KeyRow, type StoredRow, type StorageSpace, type Usage, type WriteConditions } from './storage-store.js'

export type { Usage, WriteConditions } from './storage-store.js'

/** A stored value, as `get` and `put` answer it (the HTTP answers' `data`, with its version). */
export interface StoredItem {
  key: string
  value: unknown
  /** Opaque; changes with every write. HTTP's ETag is it in quotes. */
  version: string
  /** ISO 8601. */
  updatedAt: string
}

/** A key in a listing, without its value. */
export interface StoredKey {
  key: string
  /** Bytes it takes from the quota: the key's and the value's JSON. */
  size: number
  version: string
  updatedAt: string
}

export interface ListOptions {
  /** The keys after this one (the previous page's `next`); default: from the first. */
  after?: string | undefined
  /** Keys per page, 1 to 1000; default 100. */
  limit?: number | undefined
}

export interface StorageList {
  keys: StoredKey[]
  /** The `after` of the next page; null on the last one. */
  next: string | null
}

/** One owner's values: a user's or a collection's. */
export interface StorageScope {
  /** The value under `key`, or undefined. */
  get (key: string): Promise<StoredItem | undefined>
  /**
   * Stores `value` (any JSON) under `key`, when `conditions` hold.
   * @throws StorageError STORAGE_ERR_KEY_INVALID, STORAGE_ERR_VALUE_INVALID,
   *   STORAGE_ERR_PRECONDITION_FAILED, STORAGE_ERR_VALUE_TOO_LARGE, STORAGE_ERR_TOO_MANY_KEYS,
   *   STORAGE_ERR_OWNER_FULL
   */
  put (key: string, value: unknown, conditions?: WriteConditions): Promise<StoredItem>
  /**
   * Deletes `key`: true when it was stored, false when nothing was.
   * @throws StorageError STORAGE_ERR_KEY_INVALID, STORAGE_ERR_PRECONDITION_FAILED (`ifVersion`
   *   given, and the key missing or at another version)
   */
  delete (key: string, conditions?: Pick<WriteConditions, 'ifVersion'>): Promise<boolean>
  /** Keys in byte order, a page at a time. */
  list (options?: ListOptions): Promise<StorageList>
  /** How many keys and bytes the owner has. */
  usage (): Promise<Usage>
}

export interface StorageServiceOptions {
  limits: StorageLimits
  /** The addresses that may write collections through the API (APP_ADMINS). Default none. */
  admins?: readonly string[]
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number
}

function itemOf (row: StoredRow): StoredItem {
  return { key: row.key, value: JSON.parse(row.json), version: row.version, updatedAt: new Date(row.updatedAtMs).toISOString() }
}

function keyOf (row: KeyRow): StoredKey {
  return { key: row.key, size: row.size, version: row.version, updatedAt: new Date(row.updatedAtMs).toISOString() }
}

function checkLimit (limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new RangeError(`limit must be a whole number from 1 to ${MAX_LIST_LIMIT} (got ${limit})`)
}

export class StorageService {
  readonly limits: StorageLimits
  readonly #open: () => Promise<Database>
  readonly #now: () => number
  readonly #admins: ReadonlySet<string>
  #store: { db: Database, store: StorageStore } | undefined

  /** @param open the database, opened on first use (app.database.open). */
  constructor (open: () => Promise<Database>, options: StorageServiceOptions) {
    this.#open = open
    this.limits = options.limits
    this.#now = options.now ?? Date.now
    this.#admins = new Set(options.admins ?? [])
  }

  /** Whether `address` may write collections through the API (APP_ADMINS); server code always may. */
  isAdmin (address: string): boolean {
    return this.#admins.has(address)
  }

  /** The values of the user at `address` (no check that it is one: server code knows whom it means). */
  forUser (address: string): StorageScope {
    if (typeof address !== 'string' || address === '') throw new TypeError('forUser takes the user\'s address')
    return this.#scope('user', address)
  }

  /**
   * An app-wide collection: every user reads it (GET /api/collections/{name}/…), server code and
   * the addresses in APP_ADMINS write it. Each collection has the quotas of one user.
   * @throws StorageError STORAGE_ERR_KEY_INVALID for a name out of the key rule
   */
  collection (name: string): StorageScope {
    checkKey(name, 'collection name')
    return this.#scope('collection', name)
  }

  /** Deletes every key of the user (DELETE /api/me), in one transaction; what was deleted. */
  async deleteUser (address: string): Promise<Usage> {
    return (await this.#storeNow()).deleteOwner('user', address)
  }

  async #storeNow (): Promise<StorageStore> {
    const db = await this.#open()
    if (this.#store?.db !== db) this.#store = { db, store: new StorageStore(db, { limits: this.limits, now: this.#now }) }
    return this.#store.store
  }

  #scope (space: StorageSpace, owner: string): StorageScope {
    const store = (): Promise<StorageStore> => this.#storeNow()
    const { maxValueBytes } = this.limits
    return {
      async get (key) {
        checkKey(key)
        const row = await (await store()).get(space, owner, key)
        return row === undefined ? undefined : itemOf(row)
      },
      async put (key, value, conditions = {}) {
        checkKey(key)
        const json = storedJson(value)
        const bytes = Buffer.byteLength(json)
        if (bytes > maxValueBytes) {
          throw new StorageError('STORAGE_ERR_VALUE_TOO_LARGE', `The key ${key} was not written: its value takes ${bytes} bytes as JSON, the most allowed is ${maxValueBytes} (STORAGE_MAX_VALUE_BYTES)`)
        }
        return itemOf(await (await store()).put(space, owner, key, json, conditions))
      },
      async delete (key, conditions = {}) {
        checkKey(key)
        return (await store()).delete(space, owner, key, conditions)
      },
      async list ({ after = '', limit = DEFAULT_LIST_LIMIT } = {}) {
        if (after !== '') checkKey(after, 'cursor (after)')
        checkLimit(limit)
        const page = await (await store()).list(space, owner, after, limit)
        return { keys: page.keys.map(keyOf), next: page.next }
      },
      async usage () {
        return (await store()).usage(space, owner)
      },
    }
  }
}
