/**
 * What a PostgreSQL server's autovacuum does, done for the embedded database by the service.
 *
 * PGlite runs PostgreSQL as a single-user backend: there is no postmaster, so no autovacuum
 * launcher, and nothing ever vacuums or analyzes a table unless asked. Left alone:
 * - the dead versions of updated and deleted rows are never reclaimed in the indexes, which grow
 *   and slow every scan (outbox rows, notification deliveries, stored values rewritten);
 * - the planner never gets statistics of the tables as they grow;
 * - each write transaction takes a transaction id, and the ids of old rows are never frozen. A
 *   single-user backend does not stop writes near the wrap-around (a server refuses them 3 million
 *   ids before it): after about 2.1 billion write transactions, old rows would seem to come from
 *   the future and vanish from every query. At a few hundred writes a second, that is months.
 *
 * So every `intervalMs` this asks PostgreSQL's own statistics which tables a server's autovacuum
 * would take now, by PostgreSQL's own settings and formulas (the `autovacuum_*` thresholds and
 * scale factors), and runs `VACUUM`, `ANALYZE` or both on each, one statement at a time with a
 * turn of the event loop between them; when the database's oldest unfrozen transaction id is
 * older than `autovacuum_freeze_max_age` (or its multixact age older than
 * `autovacuum_multixact_freeze_max_age`), it runs `VACUUM (FREEZE)` over the whole database, the
 * system catalogs included. The statements go through the database's queue like any other, so
 * they wait for the transaction in progress, and the requests after them wait for them: each run
 * is reported (with its duration) so that an operator sees the pause it made.
 */
import { REAL_TIMERS, type TimerHandle, type Timers } from 'pocketnet-client'
import type { Sql } from './database.js'

/**
 * How often the statistics are looked at, by default: ten minutes, where a server's autovacuum
 * looks every minute (`autovacuum_naptime`). A server vacuums in a process of its own, pausing
 * between pages; here each statement holds the service's one thread, and a vacuum's cost is
 * mostly per run (an index is read whole, an analyze samples up to 30,000 rows), not per dead row:
 * fewer runs cost less in all (bench/results.md, "The embedded database's vacuuming").
 */
export const AUTOVACUUM_INTERVAL_MS = 600_000

/** What one run did. */
export interface AutovacuumRun {
  /** Tables vacuumed, `schema.table`. */
  vacuumed: string[]
  /** Tables analyzed. */
  analyzed: string[]
  /** Whether the whole database was vacuumed with FREEZE (its transaction ids grew old). */
  froze: boolean
  /** How long the run held the database, in milliseconds. */
  ms: number
}

export type AutovacuumReport = { run: AutovacuumRun } | { error: unknown }

export interface AutovacuumOptions {
  /** Default {@link AUTOVACUUM_INTERVAL_MS}. */
  intervalMs?: number
  /**
   * The transaction-id age above which the database is frozen. Default: the database's
   * `autovacuum_freeze_max_age` (200 million unless PostgreSQL's start parameters say otherwise).
   */
  freezeMaxAge?: number
  /** Told after every run that did something, and of every run that failed. */
  report?: (report: AutovacuumReport) => void
  timers?: Timers
}

interface Candidate { schema: string, name: string, vacuum: boolean, analyze: boolean }

/** The tables a server's autovacuum would take now, and why, by its own formulas. */
const CANDIDATES = `
SELECT schemaname AS schema, relname AS name, needs_vacuum AS vacuum, needs_analyze AS analyze FROM (
  SELECT s.schemaname, s.relname,
    s.n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8 + current_setting('autovacuum_vacuum_scale_factor')::float8 * greatest(c.reltuples, 0)
      OR s.n_ins_since_vacuum > current_setting('autovacuum_vacuum_insert_threshold')::float8 + current_setting('autovacuum_vacuum_insert_scale_factor')::float8 * greatest(c.reltuples, 0)
      AS needs_vacuum,
    s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8 + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
      AS needs_analyze
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
) t WHERE needs_vacuum OR needs_analyze ORDER BY schemaname, relname`

/** Whether the database's oldest transaction ids or multixacts are older than the limits. */
const FREEZE_DUE = `
SELECT age(datfrozenxid) > coalesce($1::integer, current_setting('autovacuum_freeze_max_age')::integer)
    OR mxid_age(datminmxid) > current_setting('autovacuum_multixact_freeze_max_age')::integer AS due
FROM pg_database WHERE datname = current_database()`

function quoted (identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`
}

export class EmbeddedAutovacuum {
  readonly #sql: Sql
  readonly #intervalMs: number
  readonly #freezeMaxAge: number | null
  readonly #report: (report: AutovacuumReport) => void
  readonly #timers: Timers
  #timer: TimerHandle | undefined
  #running: Promise<void> | undefined
  #stopped = false

  constructor (sql: Sql, options: AutovacuumOptions = {}) {
    this.#sql = sql
    this.#intervalMs = options.intervalMs ?? AUTOVACUUM_INTERVAL_MS
    this.#freezeMaxAge = options.freezeMaxAge ?? null
    this.#report = options.report ?? (() => {})
    this.#timers = options.timers ?? REAL_TIMERS
  }

  /** Runs every `intervalMs` from now until stop(); a pending run keeps no process alive. */
  start (): void {
    if (this.#stopped || this.#timer !== undefined) return
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined
      this.#running = this.runOnce().then(run => {
        if (run.vacuumed.length > 0 || run.analyzed.length > 0 || run.froze) this.#report({ run })
      }, (error: unknown) => {
        if (!this.#stopped) this.#report({ error })
      }).finally(() => {
        this.#running = undefined
        this.start()
      })
    }, this.#intervalMs)
  }

  /** No run starts after this; resolves once the one in progress, if any, has ended. */
  async stop (): Promise<void> {
    this.#stopped = true
    this.#timers.clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  /** Vacuums, analyzes and freezes what is due now, one statement after the other. */
  async runOnce (): Promise<AutovacuumRun> {
    const started = performance.now()
    const run: AutovacuumRun = { vacuumed: [], analyzed: [], froze: false, ms: 0 }
    // PostgreSQL hands its counters of dead and changed rows to the statistics at most once a
    // second; this has it hand them over at the end of this statement, so the next one reads them.
    await this.#sql.query('SELECT pg_stat_force_next_flush()')
    const { rows: [freeze] } = await this.#sql.query<{ due: boolean }>(FREEZE_DUE, [this.#freezeMaxAge])
    if (freeze?.due === true) {
      // Every table, the catalogs too: the database's age is its oldest table's.
      await this.#sql.exec('VACUUM (FREEZE)')
      run.froze = true
    } else {
      const { rows } = await this.#sql.query<Candidate>(CANDIDATES)
      for (const table of rows) {
        const name = `${quoted(table.schema)}.${quoted(table.name)}`
        // Without the database-wide statistics (a read of every table's row in pg_class after
        // each table): only the freeze above reads them, and a freeze updates them itself.
        if (table.vacuum && !this.#stopped) {
          await this.#betweenStatements()
          await this.#sql.exec(`VACUUM (SKIP_DATABASE_STATS) ${name}`)
          run.vacuumed.push(`${table.schema}.${table.name}`)
        }
        if (table.analyze && !this.#stopped) {
          await this.#betweenStatements()
          await this.#sql.exec(`ANALYZE ${name}`)
          run.analyzed.push(`${table.schema}.${table.name}`)
        }
      }
    }
    run.ms = performance.now() - started
    return run
  }

  /**
   * A turn of the event loop before each statement: the embedded database answers inside
   * promises, so without it the run's statements would follow one another with no request
   * answered in between (the cached routes need no database).
   */
  #betweenStatements (): Promise<void> {
    return new Promise(resolve => setImmediate(resolve))
  }
}
