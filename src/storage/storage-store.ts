/**
 * The stored values in the database, by owner: a user's address or a collection's name, each in
 * its `space`. No HTTP here, and no choice of who may write: the routes and StorageService decide
 * that; this keeps the versions and the quotas exact.
 *
 * Each write is one call of a function of the database (`storage_put`, now as
 * db/migrations/0010-storage-put-one-write.ts has it, and `storage_delete`:
 * db/migrations/0007-user-storage.ts), one transaction that first locks its owner's usage row,
 * then reads the key, checks the write's conditions and the quotas, and writes the key and the
 * new totals. Two writers of one owner, on one server or on several instances, thus take turns,
 * and the second sees what the first committed: of two writes made with the same expected
 * version, one wins and the other fails its condition; the totals never pass a quota. The
 * function answers what it did, and the refusals are made here, in words, from its figures.
 */
import { randomBytes } from 'node:crypto'
import type { Database } from '../db/database.js'
import { safeInteger } from '../db/database.js'
import { StorageError } from './storage-errors.js'
import { sizeOf, type StorageLimits } from './storage-rules.js'

/** Whose values: a signed-in user's, or an app-wide collection's. */
export type StorageSpace = 'user' | 'collection'

/** A stored value, its JSON text as stored. */
export interface StoredRow {
  key: string
  json: string
  /** Changes with every write of the key, never repeats (random): what ETags carry. */
  version: string
  updatedAtMs: number
}

/** A key as the listing shows it, without its value. */
export interface KeyRow {
  key: string
  /** Bytes it takes from the quota: its key and its value's JSON. */
  size: number
  version: string
  updatedAtMs: number
}

export interface Usage {
  keys: number
  bytes: number
}

/**
 * What a write expects of the stored key (HTTP's If-Match and If-None-Match: *). Unmet, the
 * write fails with STORAGE_ERR_PRECONDITION_FAILED and nothing changes.
 */
export interface WriteConditions {
  /** The stored version must be this one, or one of these; `'*'`: the key must exist, at any version. */
  ifVersion?: string | readonly string[] | undefined
  /** The key must not exist (create only). */
  ifAbsent?: boolean | undefined
}

export interface StoragePage {
  keys: KeyRow[]
  /** The `after` of the next page; null on the last one. */
  next: string | null
}

export interface StorageStoreOptions {
  limits: StorageLimits
  /** Milliseconds since the epoch, for `updatedAt`. Default `Date.now`. */
  now?: () => number
}

const VERSION_BYTES = 12

function newVersion (): string {
  return randomBytes(VERSION_BYTES).toString('base64url')
}

function preconditionFailed (key: string, stored: string | null, conditions: WriteConditions): StorageError {
  const why = stored === null
    ? 'it does not exist'
    : conditions.ifAbsent === true ? 'it exists already' : 'its stored version is another one'
  return new StorageError('STORAGE_ERR_PRECONDITION_FAILED', `The key ${key} was not written: ${why}`)
}

/** If-Match's versions as the functions take them: null for no condition. */
function ifVersions (conditions: WriteConditions): string[] | null {
  return conditions.ifVersion === undefined ? null : [conditions.ifVersion].flat()
}

interface PutOutcome {
  outcome: 'written' | 'precondition_failed' | 'too_many_keys' | 'owner_full'
  owner_keys: number
  owner_bytes: unknown
  stored_version: string | null
  stored_size: number | null
}

function usageOf (row: { keys: unknown, bytes: unknown } | undefined): Usage {
  return row === undefined ? { keys: 0, bytes: 0 } : { keys: safeInteger(row.keys, 'storage_usage.keys'), bytes: safeInteger(row.bytes, 'storage_usage.bytes') }
}

export class StorageStore {
  readonly #db: Database
  readonly #limits: StorageLimits
  readonly #now: () => number

  constructor (db: Database, options: StorageStoreOptions) {
    this.#db = db
    this.#limits = options.limits
    this.#now = options.now ?? Date.now
  }

  async get (space: StorageSpace, owner: string, key: string): Promise<StoredRow | undefined> {
    const { rows } = await this.#db.query<{ value: string, version: string, updated_at_ms: unknown }>(
      'SELECT value, version, updated_at_ms FROM storage_items WHERE space = $1 AND owner = $2 AND key = $3', [space, owner, key])
    const row = rows[0]
    return row === undefined ? undefined : { key, json: row.value, version: row.version, updatedAtMs: safeInteger(row.updated_at_ms, 'storage_items.updated_at_ms') }
  }

  /**
   * Writes `json` (already measured against the value limit) under `key`.
   * @throws StorageError STORAGE_ERR_PRECONDITION_FAILED, STORAGE_ERR_TOO_MANY_KEYS, STORAGE_ERR_OWNER_FULL
   */
  async put (space: StorageSpace, owner: string, key: string, json: string, conditions: WriteConditions = {}): Promise<StoredRow> {
    const size = sizeOf(key, json)
    const version = newVersion()
    const updatedAtMs = this.#now()
    const { maxKeys, maxOwnerBytes } = this.#limits
    const { rows: [done] } = await this.#db.query<PutOutcome>('SELECT * FROM storage_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [space, owner, key, json, size, version, updatedAtMs, ifVersions(conditions), conditions.ifAbsent === true, maxKeys, maxOwnerBytes])
    switch (done?.outcome) {
      case 'written':
        return { key, json, version, updatedAtMs }
      case 'precondition_failed':
        throw preconditionFailed(key, done.stored_version, conditions)
      case 'too_many_keys':
        throw new StorageError('STORAGE_ERR_TOO_MANY_KEYS', `The key ${key} was not written: ${done.owner_keys} keys are stored, the most allowed is ${maxKeys} (STORAGE_MAX_KEYS)`)
      case 'owner_full': {
        const bytes = safeInteger(done.owner_bytes, 'owner_bytes') - (done.stored_size ?? 0) + size
        throw new StorageError('STORAGE_ERR_OWNER_FULL', `The key ${key} was not written: its owner's keys and values would take ${bytes} bytes, the most allowed is ${maxOwnerBytes} (STORAGE_MAX_USER_BYTES)`)
      }
      default:
        throw new Error(`storage_put answered ${JSON.stringify(done)}`)
    }
  }

  /**
   * Deletes `key`: true when it was stored, false when there was nothing to delete (with no
   * condition; with one, a missing key fails it).
   * @throws StorageError STORAGE_ERR_PRECONDITION_FAILED
   */
  async delete (space: StorageSpace, owner: string, key: string, conditions: Pick<WriteConditions, 'ifVersion'> = {}): Promise<boolean> {
    const { rows: [done] } = await this.#db.query<{ outcome: 'deleted' | 'missing' | 'precondition_failed', stored_version: string | null }>(
      'SELECT * FROM storage_delete($1, $2, $3, $4)', [space, owner, key, ifVersions(conditions)])
    switch (done?.outcome) {
      case 'deleted': return true
      case 'missing': return false
      case 'precondition_failed': throw preconditionFailed(key, done.stored_version, conditions)
      default: throw new Error(`storage_delete answered ${JSON.stringify(done)}`)
    }
  }

  /** Up to `limit` keys after `after` (`''`: from the first), in byte order. */
  async list (space: StorageSpace, owner: string, after: string, limit: number): Promise<StoragePage> {
    const { rows } = await this.#db.query<{ key: string, size: number, version: string, updated_at_ms: unknown }>(
      'SELECT key, size, version, updated_at_ms FROM storage_items WHERE space = $1 AND owner = $2 AND key > $3 ORDER BY key LIMIT $4',
      [space, owner, after, limit + 1])
    const keys = rows.slice(0, limit).map(row => ({ key: row.key, size: row.size, version: row.version, updatedAtMs: safeInteger(row.updated_at_ms, 'storage_items.updated_at_ms') }))
    return { keys, next: rows.length > limit ? (keys.at(-1) as KeyRow).key : null }
  }

  async usage (space: StorageSpace, owner: string): Promise<Usage> {
    const { rows } = await this.#db.query<{ keys: unknown, bytes: unknown }>('SELECT keys, bytes FROM storage_usage WHERE space = $1 AND owner = $2', [space, owner])
    return usageOf(rows[0])
  }

  /** Deletes every key of the owner and its usage row, in one statement; what it held. */
  async deleteOwner (space: StorageSpace, owner: string): Promise<Usage> {
    // The keys go with the usage row (ON DELETE CASCADE), which a concurrent write waits for.
    const { rows } = await this.#db.query<{ keys: unknown, bytes: unknown }>('DELETE FROM storage_usage WHERE space = $1 AND owner = $2 RETURNING keys, bytes', [space, owner])
    return usageOf(rows[0])
  }
}
