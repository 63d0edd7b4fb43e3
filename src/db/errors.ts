/** What opening or migrating the database refuses. Match on `err.code`. */
import { CodedError } from 'pocketnet-client'

export const DATABASE_ERROR_CODES = {
  DB_ERR_LOCKED: 'The data directory is in use by another running process: the embedded database has one owner at a time (several instances need DATABASE_URL).',
  DB_ERR_SCHEMA_NEWER: 'The database was migrated by a newer version of the service than this one: migrations only go forward.',
  DB_ERR_MIGRATION_CHANGED: 'A migration already applied to the database differs from the one of the same version in this code: applied migrations are never edited.',
  DB_ERR_OPTIONS: 'The storage options are unusable: neither a data directory nor a database URL, a URL that is not postgres://, or the embedded database with several workers (WEB_CONCURRENCY above 1 without DATABASE_URL).',
  DB_ERR_STOPPED: 'The embedded database stopped for good in this process (its PostgreSQL aborted, on a full disk while writing its log for one): the process must exit, and the next start recovers the database from its files.',
} as const

export type DatabaseErrorCode = keyof typeof DATABASE_ERROR_CODES

export class DatabaseError extends CodedError<DatabaseErrorCode> {
  override name = 'DatabaseError'
}
