/**
 * The embedded database: PostgreSQL compiled to WebAssembly (PGlite), its files in a data
 * directory, no server to run. Chosen over SQLite through a native module because it is the same
 * PostgreSQL as the server that several instances share: one SQL dialect, the same constraints,
 * `ON CONFLICT` and `FOR UPDATE SKIP LOCKED`, tested the same way; and it installs from npm with
 * no native build, where better-sqlite3 (whose 13.x needs Node 22) fetches a binary from GitHub or
 * compiles C++ on install. It costs memory and start-up time instead: bench/results.md, "Payments
 * store", has the figures of both.
 *
 * Durable across a crash of the process (`kill -9`): PGlite writes each commit's WAL to the files
 * before the commit returns, and the kernel keeps what was written. It does not fsync, so a crash
 * of the machine itself may lose the last commits: for that, use a PostgreSQL server.
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import type { Database, Sql } from './database.js'
import { releaseDataDirLock, takeDataDirLock } from './data-dir-lock.js'

/**
 * PGlite's own start parameters, with less shared memory than its default 128 MB: a payments
 * store's working set is small, and every megabyte of it stays in the process.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

function sqlOf (target: PGlite | Transaction): Sql {
  return {
    async query<Row>(text: string, params: unknown[] = []) {
      const result = await target.query<Row>(text, params)
      return { rows: result.rows, rowCount: result.affectedRows ?? 0 }
    },
    async exec (text: string) {
      await target.exec(text)
    },
  }
}

/**
 * Opens (creating it on first use) the embedded database in `dataDir`, which this process then
 * owns until close().
 * @throws DatabaseError `DB_ERR_LOCKED` while another running process has it open.
 */
export async function openEmbeddedDatabase (dataDir: string): Promise<Database> {
  const dir = resolve(dataDir)
  mkdirSync(dir, { recursive: true })
  const lockFile = join(dir, 'postgres.lock')
  takeDataDirLock(lockFile)
  let pglite: PGlite
  try {
    pglite = await PGlite.create(join(dir, 'postgres'), { startParams: START_PARAMS })
  } catch (error) {
    releaseDataDirLock(lockFile)
    throw error
  }
  let closed = false
  return {
    kind: 'embedded',
    ...sqlOf(pglite),
    transaction: work => pglite.transaction(tx => work(sqlOf(tx))),
    async close () {
      if (closed) return
      closed = true
      try {
        await pglite.close()
      } finally {
        releaseDataDirLock(lockFile)
      }
    },
  }
}
