/**
 * The stored values in the database, by owner: a user's address or a collection's name, each in
 * its `space`. No HTTP here, and no choice of who may write: the routes and StorageService decide
 * that; this keeps the versions and the quotas exact.
 *
 * Each write is one transaction that first locks its owner's usage row (created on the first
 * write), then reads the key, checks the write's conditions and the quotas, writes the key and
 * the new totals. Two writers of one owner, on one server or on several instances, thus take
 * turns, and the second sees what the first committed: of two writes made with the same expected
 * version, one wins and the other fails its condition; the totals never pass a quota. The lock is
 * its own statement, before the key is read: at READ COMMITTED a statement reads what was
 * committed when it began, so a read in the statement that waited for the lock could miss the
 * write that held it.
 */
import { randomBytes } from 'node:crypto'
import type { Database, Sql } from '../db/database.js'
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

function conditionsHold (conditions: WriteConditions, stored: string | undefined): boolean {
  if (conditions.ifAbsent === true && stored !== undefined) return false
  if (conditions.ifVersion === undefined) return true
  const expected = [conditions.ifVersion].flat()
  return stored !== undefined && (expected.includes('*') || expected.includes(stored))
}

function preconditionFailed (key: string, stored: string | undefined, conditions: WriteConditions): StorageError {
  const why = stored === undefined
    ? 'it does not exist'
    : conditions.ifAbsent === true ? 'it exists already' : 'its stored version is another one'
  return new StorageError('STORAGE_ERR_PRECONDITION_FAILED', `The key ${key} was not written: ${why}`)
}

const LOCK_USAGE = `INSERT INTO storage_usage (space, owner) VALUES ($1, $2)
  ON CONFLICT (space, owner) DO UPDATE SET keys = storage_usage.keys
  RETURNING keys, bytes`
const READ_KEY_STATE = 'SELECT version, size FROM storage_items WHERE space = $1 AND owner = $2 AND key = $3'
const WRITE_KEY = `INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (space, owner, key) DO UPDATE SET value = EXCLUDED.value, size = EXCLUDED.size, version = EXCLUDED.version, updated_at_ms = EXCLUDED.updated_at_ms`
const WRITE_USAGE = 'UPDATE storage_usage SET keys = $3, bytes = $4 WHERE space = $1 AND owner = $2'

interface KeyState { version: string, size: number }

async function keyState (sql: Sql, space: StorageSpace, owner: string, key: string): Promise<KeyState | undefined> {
  const { rows } = await sql.query<{ version: string, size: number }>(READ_KEY_STATE, [space, owner, key])
  return rows[0]
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
    return this.#db.transaction(async sql => {
      const { rows: [locked] } = await sql.query<{ keys: unknown, bytes: unknown }>(LOCK_USAGE, [space, owner])
      const usage = usageOf(locked)
      const stored = await keyState(sql, space, owner, key)
      if (!conditionsHold(conditions, stored?.version)) throw preconditionFailed(key, stored?.version, conditions)
      const keys = usage.keys + (stored === undefined ? 1 : 0)
      const bytes = usage.bytes - (stored?.size ?? 0) + size
      // Only what grows is refused: an owner above a quota lowered since can still shrink.
      if (stored === undefined && keys > this.#limits.maxKeys) {
        throw new StorageError('STORAGE_ERR_TOO_MANY_KEYS', `The key ${key} was not written: ${usage.keys} keys are stored, the most allowed is ${this.#limits.maxKeys} (STORAGE_MAX_KEYS)`)
      }
      if (bytes > this.#limits.maxOwnerBytes && size > (stored?.size ?? 0)) {
        throw new StorageError('STORAGE_ERR_OWNER_FULL', `The key ${key} was not written: its owner's keys and values would take ${bytes} bytes, the most allowed is ${this.#limits.maxOwnerBytes} (STORAGE_MAX_USER_BYTES)`)
      }
      const version = newVersion()
      const updatedAtMs = this.#now()
      await sql.query(WRITE_KEY, [space, owner, key, json, size, version, updatedAtMs])
      await sql.query(WRITE_USAGE, [space, owner, keys, bytes])
      return { key, json, version, updatedAtMs }
    })
  }

  /**
   * Deletes `key`: true when it was stored, false when there was nothing to delete (with no
   * condition; with one, a missing key fails it).
   * @throws StorageError STORAGE_ERR_PRECONDITION_FAILED
   */
  async delete (space: StorageSpace, owner: string, key: string, conditions: Pick<WriteConditions, 'ifVersion'> = {}): Promise<boolean> {
    return this.#db.transaction(async sql => {
      const { rows: [locked] } = await sql.query<{ keys: unknown, bytes: unknown }>('SELECT keys, bytes FROM storage_usage WHERE space = $1 AND owner = $2 FOR UPDATE', [space, owner])
      const stored = locked === undefined ? undefined : await keyState(sql, space, owner, key)
      if (!conditionsHold(conditions, stored?.version)) throw preconditionFailed(key, stored?.version, conditions)
      if (stored === undefined) return false
      const usage = usageOf(locked)
      await sql.query('DELETE FROM storage_items WHERE space = $1 AND owner = $2 AND key = $3', [space, owner, key])
      await sql.query(WRITE_USAGE, [space, owner, usage.keys - 1, usage.bytes - stored.size])
      return true
    })
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
