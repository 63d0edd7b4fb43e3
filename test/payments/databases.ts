/**
 * The two databases the payments code runs on, for tests that must hold on both: the embedded one
 * (PGlite in a temporary directory, copied from one made once per process, since creating one
 * takes seconds) and a PostgreSQL server (a fresh database on a server started by the file).
 * Opening an embedded database still takes a fraction of a second: test files open one per
 * backend and give each test invoices and txids of its own (`sharedDatabase`).
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Database } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import type { Migration } from '../../src/db/migrate.js'
import type { TestPostgres } from '../helpers/start-postgres.js'

type WithAfter = { after (fn: () => unknown): void }

export interface Backend {
  name: 'embedded' | 'server'
  /** A new, empty database migrated to `migrations` (default: all), closed when the test ends. */
  open (t: WithAfter, migrations?: readonly Migration[]): Promise<Database>
}

let template: Promise<string> | undefined

/**
 * An initialised, never-migrated embedded data directory, made once per process. initdb runs in a
 * child process: it takes PGlite's memory to its peak, which would otherwise stay with the tests.
 */
function templateDir (): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payments-template-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const openDatabaseUrl = new URL('../../src/db/open-database.ts', import.meta.url).href
    const script = `const { openDatabase } = await import(${JSON.stringify(openDatabaseUrl)}); await (await openDatabase({ dataDir: ${JSON.stringify(dir)}, migrations: [] })).close()`
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
    return dir
  })()
  return template
}

/** A fresh embedded data directory, initialised, not migrated. The caller removes it. */
export async function freshDataDir (): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'payments-db-'))
  cpSync(await templateDir(), dir, { recursive: true })
  return dir
}

export function backends (postgres: TestPostgres): Backend[] {
  return [
    {
      name: 'embedded',
      async open (t, migrations) {
        const dataDir = await freshDataDir()
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
