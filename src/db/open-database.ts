/**
 * The service's database, as its configuration says: a PostgreSQL server when `DATABASE_URL` is
 * set (several instances share it), else the embedded database in `DATA_DIR` (one instance);
 * migrated to the current schema before it is handed over. Each driver is loaded when it is
 * opened: an instance on a server never loads PGlite, nor one without payments either driver.
 */
import { DatabaseError } from './errors.js'
import type { Database } from './database.js'
import { runMigrations, type Migration } from './migrate.js'
import { MIGRATIONS } from './migrations/schema-history.js'
import type { EmbeddedDatabaseOptions } from './embedded-database.js'
import type { ServerDatabaseOptions } from './server-database.js'

export interface OpenDatabaseOptions extends ServerDatabaseOptions, EmbeddedDatabaseOptions {
  /** postgres://…: a server. Empty or absent: the embedded database in `dataDir`. */
  databaseUrl?: string
  /** The embedded database's directory (created if missing). */
  dataDir?: string
  /** The schema to migrate to. Default: the service's ({@link MIGRATIONS}). */
  migrations?: readonly Migration[]
}

/**
 * Opens and migrates the database.
 * @throws DatabaseError `DB_ERR_OPTIONS` with neither a URL nor a directory, or a URL that is not
 *   postgres://; `DB_ERR_LOCKED`, `DB_ERR_SCHEMA_NEWER`, `DB_ERR_MIGRATION_CHANGED` from opening
 *   and migrating; `DB_ERR_STOPPED` when the embedded database aborted (then and later: `onFatal`).
 */
export async function openDatabase (options: OpenDatabaseOptions): Promise<Database> {
  const { databaseUrl = '', dataDir = '' } = options
  let db: Database
  if (databaseUrl !== '') {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new DatabaseError('DB_ERR_OPTIONS', 'the database URL must start with postgres:// or postgresql://')
    const { openServerDatabase } = await import('./server-database.js')
    db = await openServerDatabase(databaseUrl, options)
  } else if (dataDir !== '') {
    const { openEmbeddedDatabase } = await import('./embedded-database.js')
    db = await openEmbeddedDatabase(dataDir, options)
  } else {
    throw new DatabaseError('DB_ERR_OPTIONS', 'give a data directory for the embedded database, or a database URL')
  }
  try {
    await runMigrations(db, options.migrations ?? MIGRATIONS)
  } catch (error) {
    await db.close()
    throw error
  }
  return db
}
