/**
 * The two databases the payments code runs on, for tests that must hold on both: the embedded one
 * (PGlite in a temporary directory, copied from a template made once, migrated to the service's
 * schema unless the test names other migrations: scripts/pglite-template.ts) and a PostgreSQL
 * server (a fresh database on the process's server).
 * Opening an embedded database still takes a fraction of a second: test files open one per
 * backend and give each test invoices and txids of its own (`sharedDatabase`).
 */
import { rmSync } from 'node:fs'
import type { Database } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import type { Migration } from '../../src/db/migrate.js'
import { freshDataDir } from '../../scripts/pglite-template.js'
import type { TestPostgres } from '../helpers/start-postgres.js'

export { freshDataDir }

type WithAfter = { after (fn: () => unknown): void }

export interface Backend {
  name: 'embedded' | 'server'
  /** A new, empty database migrated to `migrations` (default: all), closed when the test ends. */
  open (t: WithAfter, migrations?: readonly Migration[]): Promise<Database>
}

export function backends (postgres: TestPostgres): Backend[] {
  return [
    {
      name: 'embedded',
      async open (t, migrations) {
        // The service's schema is copied in migrated; any other starts from an empty database.
        const dataDir = await freshDataDir(migrations === undefined ? 'migrated' : 'initialised')
        const db = await openDatabase({ dataDir, ...(migrations === undefined ? {} : { migrations }) }).catch(error => {
          rmSync(dataDir, { recursive: true, force: true })
          throw error
        })
        t.after(async () => {
          await db.close()
          rmSync(dataDir, { recursive: true, force: true })
        })
        return db
      },
    },
    {
      name: 'server',
      async open (t, migrations) {
        const db = await openDatabase({ databaseUrl: await postgres.freshDatabase(), ...(migrations === undefined ? {} : { migrations }) })
        t.after(() => db.close())
        return db
      },
    },
  ]
}

/**
 * One database of `backend` for the tests of a describe block: opened before the first, closed
 * after the last. Call it in the describe callback; the getter works inside tests.
 */
export function sharedDatabase (backend: Backend, hooks: { before (fn: () => unknown): void, after (fn: () => unknown): void }): () => Database {
  let db: Database | undefined
  const cleanups: Array<() => unknown> = []
  hooks.before(async () => {
    db = await backend.open({ after: fn => cleanups.push(fn) })
  })
  hooks.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })
  return () => {
    if (db === undefined) throw new Error('the shared database is not open yet')
    return db
  }
}
