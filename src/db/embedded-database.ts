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
 *
 * A PANIC of its PostgreSQL (a full disk while the WAL grows) aborts the WebAssembly module, and
 * a call into an aborted module can spin on the main thread for ever. So every statement goes in
 * through one queue that lets none in once the module aborted: the database stops for good
 * (`DB_ERR_STOPPED`), `onFatal` is told, and a watchdog kills the process should a call PGlite
 * makes by itself after the abort spin anyway. A restart recovers the database from its files.
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite, type Results } from '@electric-sql/pglite'
import { AbortReportingNodeFS } from './abort-reporting-fs.js'
import type { Database, Sql } from './database.js'
import { releaseDataDirLock, takeDataDirLock } from './data-dir-lock.js'
import { EmbeddedAutovacuum, type AutovacuumOptions } from './embedded-autovacuum.js'
import { DatabaseError } from './errors.js'
import { ExtendedQuery } from './extended-query.js'
import { startStallWatchdog } from './stall-watchdog.js'

/**
 * PGlite's own start parameters, with less shared memory than its default 128 MB: a payments
 * store's working set is small, and every megabyte of it stays in the process.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

/** How long the main thread may stop turning after an abort before the process is killed. */
const STALL_AFTER_ABORT_MS = 15_000

export interface EmbeddedDatabaseOptions {
  /**
   * The vacuuming a server's autovacuum would do, which PGlite's single-user PostgreSQL never
   * does (embedded-autovacuum.ts). Default: on, every minute, reporting nothing; `false`: off (a
   * tool that opens the database for a moment).
   */
  autovacuum?: AutovacuumOptions | false
  /**
   * Told once, when the database stops for good (`DB_ERR_STOPPED`, its message naming the data
   * directory and the cause). Default: the error is thrown out of the current turn, uncaught, so
   * that the process shuts down (src/server.ts: a fatal log line, exit 1) for a supervisor to
   * restart it.
   */
  onFatal?: (error: DatabaseError) => void
}

function throwUncaught (error: DatabaseError): void {
  process.nextTick(() => { throw error })
}

/** PostgreSQL's own log line of a PANIC, without its timestamp and process id. */
function panicLine (text: string): string | undefined {
  const match = /\bPANIC:\s+(.*)$/.exec(text)
  return match === null ? undefined : `PANIC: ${match[1]}`
}

/**
 * Opens (creating it on first use) the embedded database in `dataDir`, which this process then
 * owns until close().
 * @throws DatabaseError `DB_ERR_LOCKED` while another running process has it open.
 */
export async function openEmbeddedDatabase (dataDir: string, options: EmbeddedDatabaseOptions = {}): Promise<Database> {
  const dir = resolve(dataDir)
  mkdirSync(dir, { recursive: true })
  const lockFile = join(dir, 'postgres.lock')
  takeDataDirLock(lockFile)
  const onFatal = options.onFatal ?? throwUncaught
  /** Set by the module itself, synchronously, the moment its PostgreSQL aborts. */
  let aborted = false
  let lastPanic: string | undefined
  let stopped: DatabaseError | undefined
  const fs = new AbortReportingNodeFS(join(dir, 'postgres'), () => {
    aborted = true
    startStallWatchdog({
      stallMs: STALL_AFTER_ABORT_MS,
      message: `the embedded database in ${dir} aborted (${lastPanic ?? 'no PANIC logged'}) and the process stopped answering: killed`,
    })
  })
  let pglite: PGlite
  try {
    pglite = await PGlite.create({
      fs,
      startParams: START_PARAMS,
      // PostgreSQL's log: only its last PANIC is kept, for the message that names the cause.
      onStderr: text => {
        lastPanic = panicLine(text) ?? lastPanic
        return false
      },
    })
  } catch (error) {
    releaseDataDirLock(lockFile)
    if (aborted) throw new DatabaseError('DB_ERR_STOPPED', `the embedded database in ${dir} aborted while opening: ${lastPanic ?? (error as Error).message}`)
    throw error
  }

  function stop (cause: unknown): DatabaseError {
    if (stopped === undefined) {
      const why = lastPanic ?? (cause instanceof Error ? cause.message : 'its PostgreSQL aborted')
      // No `cause`: a logger would repeat its message after this one, which already says it.
      stopped = new DatabaseError('DB_ERR_STOPPED', `the embedded database in ${dir} stopped: ${why}. The process must restart, which recovers it from its files`)
      onFatal(stopped)
    }
    return stopped
  }

  /** One call into PGlite, unless the module aborted; an abort during it stops the database. */
  async function enter<T> (call: () => Promise<T>): Promise<T> {
    if (stopped !== undefined) throw stopped
    let result: T
    try {
      result = await call()
    } catch (error) {
      if (aborted || (error as { severity?: unknown }).severity === 'PANIC') throw stop(error)
      throw error
    }
    // An abort without a PANIC sent to the client (out of memory, say) leaves the call answered.
    if (aborted) throw stop(undefined)
    return result
  }

  // No sync of the files after each statement: PGlite's NodeFS writes through to the data
  // directory's files (Emscripten's NODEFS) and its syncToFs does nothing, while PGlite's sync
  // takes a lock and makes promises every statement (bench/results.md, "The embedded database in one exchange per statement").
  // Should a PGlite version keep writes in memory until a sync, the crash tests (kill -9 right
  // after a commit, then reopen: test/storage/storage-crash.test.ts, test/payments/crash.test.ts)
  // fail.
  const extended = new ExtendedQuery(pglite, { syncFiles: false })
  const sql: Sql = {
    async query<Row>(text: string, params: unknown[] = []) {
      const result = await enter(() => extended.query<Row>(text, params))
      return { rows: result.rows, rowCount: result.affectedRows ?? 0 }
    },
    async exec (text: string) {
      await enter(() => pglite.exec(text))
    },
  }

  // One statement or transaction at a time, as PGlite would run them anyway: a transaction is
  // run here rather than by pglite.transaction(), whose ROLLBACK after a failed statement would
  // call into the module even once it aborted.
  let queue: Promise<unknown> = Promise.resolve()
  function inTurn<T> (work: () => Promise<T>): Promise<T> {
    const turn = queue.then(work)
    queue = turn.catch(() => {})
    return turn
  }

  async function transaction<T> (work: (sql: Sql) => Promise<T>): Promise<T> {
    await sql.exec('BEGIN')
    let result: T
    try {
      result = await work(sql)
    } catch (error) {
      if (stopped === undefined) await sql.exec('ROLLBACK')
      throw error
    }
    const [commit] = await enter<Results[]>(() => pglite.exec('COMMIT'))
    // COMMIT of a transaction in which a statement failed (and `work` went on) rolls it back.
    if (commit?.command === 'ROLLBACK') throw new Error('the transaction was rolled back: a statement in it had failed')
    return result
  }

  let closed = false
  const database: Database = {
    kind: 'embedded',
    query: <Row>(text: string, params?: unknown[]) => inTurn(() => sql.query<Row>(text, params)),
    exec: text => inTurn(() => sql.exec(text)),
    transaction: work => inTurn(() => transaction(work)),
    async close () {
      if (closed) return
      closed = true
      try {
        await autovacuum?.stop()
        // An aborted module is not entered again, not even to close it: the process is ending.
        await inTurn(async () => { if (stopped === undefined && !aborted) await pglite.close() })
      } finally {
        releaseDataDirLock(lockFile)
      }
    },
  }
  const autovacuum = options.autovacuum === false ? undefined : new EmbeddedAutovacuum(database, options.autovacuum)
  autovacuum?.start()
  return database
}
