/**
 * Schema migrations: run at start, forward only. Each applied version is a row of
 * `schema_migrations` with a checksum of its SQL; each migration runs in its own transaction with
 * its row, so a crash leaves it either applied or not. Instances starting together on one server
 * take turns through an advisory lock, and the second finds the work done.
 */
import { createHash } from 'node:crypto'
import type { Database } from './database.js'
import { DatabaseError } from './errors.js'

export interface Migration {
  /** 1, 2, 3 …: applied in this order, each once, never edited once released. */
  version: number
  /** What it does, in a few words (kebab-case). */
  name: string
  sql: string
}

/** Any constant: the advisory lock only has to be the same for every instance. */
const MIGRATION_LOCK_KEY = 726_001

function checksumOf (migration: Migration): string {
  return createHash('sha256').update(migration.sql).digest('hex')
}

function checkOrder (migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new TypeError(`migration ${migration.name} has version ${migration.version}, expected ${index + 1}: versions are 1, 2, 3 … in order`)
  })
}

/**
 * Applies the migrations `db` lacks, in order, and returns the versions it applied.
 * @throws DatabaseError `DB_ERR_SCHEMA_NEWER` when the database has a version this code does not
 *   know; `DB_ERR_MIGRATION_CHANGED` when an applied migration's SQL differs from this code's.
 */
export async function runMigrations (db: Database, migrations: readonly Migration[]): Promise<number[]> {
  checkOrder(migrations)
  await db.transaction(async sql => {
    await sql.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
    await sql.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
  })
  const applied: number[] = []
  for (const migration of migrations) {
    const done = await db.transaction(async sql => {
      await sql.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
      const { rows } = await sql.query<{ version: number, checksum: string }>('SELECT version, checksum FROM schema_migrations ORDER BY version')
      const newest = rows.at(-1)?.version ?? 0
      if (newest > migrations.length) {
        throw new DatabaseError('DB_ERR_SCHEMA_NEWER', `the database is at schema version ${newest}, and this code knows versions up to ${migrations.length}`)
      }
      const row = rows.find(existing => existing.version === migration.version)
      if (row !== undefined) {
        if (row.checksum !== checksumOf(migration)) {
          throw new DatabaseError('DB_ERR_MIGRATION_CHANGED', `migration ${migration.version} (${migration.name}) was applied with other SQL than this code has`)
        }
        return false
      }
      await sql.exec(migration.sql)
      await sql.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, checksumOf(migration)])
      return true
    })
    if (done) applied.push(migration.version)
  }
  return applied
}

/** The versions applied to `db`, in order. */
export async function appliedVersions (db: Database): Promise<number[]> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
  return rows.map(row => row.version)
}
