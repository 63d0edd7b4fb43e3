/**
 * The embedded database's vacuuming (src/db/embedded-autovacuum.ts): PGlite's single-user
 * PostgreSQL never vacuums, analyzes or freezes on its own (the first test shows it), so the
 * service does what a server's autovacuum would, by PostgreSQL's own thresholds, on a timer.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { Database } from '../../src/db/database.js'
import { EmbeddedAutovacuum, type AutovacuumReport } from '../../src/db/embedded-autovacuum.js'
import { openDatabase } from '../../src/db/open-database.js'
import { manualClock } from '../helpers/manual-clock.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from '../payments/databases.js'

type WithAfter = { after (fn: () => unknown): void }

/** An embedded database without the schema's tables, its own vacuuming off unless given. */
async function database (t: WithAfter, autovacuum: Parameters<typeof openDatabase>[0]['autovacuum'] = false): Promise<Database> {
  const dir = await freshDataDir('initialised')
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const db = await openDatabase({ dataDir: dir, migrations: [], autovacuum })
  t.after(() => db.close())
  return db
}

interface TableStats { n_dead_tup: number, vacuum_count: number, analyze_count: number }

async function statsOf (db: Database, table: string): Promise<TableStats> {
  // The counters reach the statistics at most once a second, unless told to now.
  await db.query('SELECT pg_stat_force_next_flush()')
  const { rows: [stats] } = await db.query<TableStats>('SELECT n_dead_tup::integer, vacuum_count::integer, analyze_count::integer FROM pg_stat_user_tables WHERE relname = $1', [table])
  assert.ok(stats, `statistics of ${table}`)
  return stats
}

/** The database's oldest unfrozen transaction id's age: one more for each write transaction. */
async function frozenAge (db: Database): Promise<number> {
  return (await db.query<{ age: number }>('SELECT age(datfrozenxid) AS age FROM pg_database WHERE datname = current_database()')).rows[0]!.age
}

/**
 * `count` write transactions, each updating one of `rows` rows of `table` in an indexed column:
 * a new version with new index entries, which a page's own pruning cannot take back (an update of
 * no indexed column is, and its dead versions never reach a vacuum's threshold).
 */
async function churn (db: Database, table: string, rows: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await db.query(`UPDATE ${table} SET v = v + 1 WHERE id = $1`, [1 + (i % rows)])
}

describe('the embedded database\'s vacuuming', () => {
  it('is needed: left alone, PGlite keeps every dead row version and every transaction id unfrozen', async (t) => {
    const db = await database(t)
    await db.exec('CREATE TABLE churned (id integer PRIMARY KEY, v integer NOT NULL); CREATE INDEX ON churned (v); INSERT INTO churned SELECT g, 0 FROM generate_series(1, 100) g')
    const before = await frozenAge(db)
    await churn(db, 'churned', 100, 300)
    // Long past a server's autovacuum threshold (50 + 20 % of the rows), and nothing took them.
    const stats = await statsOf(db, 'churned')
    assert.ok(stats.n_dead_tup >= 200, `${stats.n_dead_tup} dead row versions`)
    assert.deepEqual([stats.vacuum_count, stats.analyze_count], [0, 0])
    assert.ok(await frozenAge(db) >= before + 300, 'one transaction id more per write, none frozen')
  })

  it('vacuums a table past PostgreSQL\'s thresholds, analyzes one that only grew a little, and leaves the rest', async (t) => {
    const db = await database(t)
    await db.exec(`CREATE TABLE churned (id integer PRIMARY KEY, v integer NOT NULL); CREATE INDEX ON churned (v); INSERT INTO churned SELECT g, 0 FROM generate_series(1, 100) g;
      CREATE TABLE grown (id integer PRIMARY KEY, v integer NOT NULL);
      CREATE TABLE quiet (id integer PRIMARY KEY, v integer NOT NULL); INSERT INTO quiet VALUES (1, 0)`)
    const autovacuum = new EmbeddedAutovacuum(db)
    // The first run takes what the creation left: every table new since the last analyze.
    await autovacuum.runOnce()
    await churn(db, 'churned', 100, 300)
    // 60 rows: past the analyze threshold (50 + 10 %), short of the vacuum's for inserts (1000 + 20 %).
    await db.exec('INSERT INTO grown SELECT g, 0 FROM generate_series(1, 60) g')
    const quietBefore = await statsOf(db, 'quiet')
    const grownBefore = await statsOf(db, 'grown')

    const run = await autovacuum.runOnce()
    // The churned table passed both thresholds; the grown one only the analyze's.
    assert.deepEqual([run.vacuumed, run.analyzed, run.froze], [['public.churned'], ['public.churned', 'public.grown'], false])
    assert.ok(run.ms > 0)
    const churned = await statsOf(db, 'churned')
    assert.equal(churned.n_dead_tup, 0, 'the dead row versions reclaimed')
    const grown = await statsOf(db, 'grown')
    assert.deepEqual([grown.vacuum_count, grown.analyze_count], [0, grownBefore.analyze_count + 1], 'analyzed, not vacuumed')
    assert.deepEqual(await statsOf(db, 'quiet'), quietBefore, 'a table with nothing new is left alone')

    const idle = await autovacuum.runOnce()
    assert.deepEqual([idle.vacuumed, idle.analyzed, idle.froze], [[], [], false], 'nothing more to do')
  })

  it('freezes the whole database once its transaction ids are older than the limit, the catalogs too', async (t) => {
    const db = await database(t)
    await db.exec('CREATE TABLE churned (id integer PRIMARY KEY, v integer NOT NULL); CREATE INDEX ON churned (v); INSERT INTO churned SELECT g, 0 FROM generate_series(1, 10) g')
    // A limit of 200 ids stands for PostgreSQL's 200 million.
    const autovacuum = new EmbeddedAutovacuum(db, { freezeMaxAge: 200 })
    await churn(db, 'churned', 10, 250)
    assert.ok(await frozenAge(db) > 200)

    const run = await autovacuum.runOnce()
    assert.equal(run.froze, true)
    assert.ok(await frozenAge(db) < 100, 'every table frozen: the database\'s age starts again')
    assert.equal((await autovacuum.runOnce()).froze, false, 'not again while young')
  })

  it('runs on its timer, reports each run that did something, and stops with the database', async (t) => {
    const clock = manualClock()
    const reports: AutovacuumReport[] = []
    const db = await database(t, { intervalMs: 60_000, timers: clock.timers, report: report => reports.push(report) })
    await db.exec('CREATE TABLE churned (id integer PRIMARY KEY, v integer NOT NULL); CREATE INDEX ON churned (v); INSERT INTO churned SELECT g, 0 FROM generate_series(1, 100) g')
    await churn(db, 'churned', 100, 300)
    clock.advance(59_999)
    assert.equal((await statsOf(db, 'churned')).vacuum_count, 0, 'not before its time')

    clock.advance(1)
    await waitFor('the first run reported', () => reports.length === 1)
    const [first] = reports
    assert.ok(first !== undefined && 'run' in first && first.run.vacuumed.includes('public.churned'), JSON.stringify(first))
    assert.equal((await statsOf(db, 'churned')).n_dead_tup, 0)

    // The next run has nothing to do, and says nothing.
    clock.advance(60_000)
    await waitFor('the second run scheduled', () => clock.pendingTimers === 1)
    assert.equal(reports.length, 1)

    await db.close()
    assert.equal(clock.pendingTimers, 0, 'no run after the database closed')
  })

  it('reports a run that failed, and tries again at the next one, ten minutes later by default', async (t) => {
    const clock = manualClock()
    const reports: AutovacuumReport[] = []
    let failing = true
    const db = await database(t)
    // A database whose statements fail while `failing` is set: the runs go through it.
    const flaky: Database = { ...db, query: async (text, params) => { if (failing) throw new Error('the database is busy'); return await db.query(text, params) } }
    const autovacuum = new EmbeddedAutovacuum(flaky, { timers: clock.timers, report: report => reports.push(report) })
    t.after(() => autovacuum.stop())
    autovacuum.start()
    clock.advance(599_999)
    assert.deepEqual([clock.pendingTimers, reports.length], [1, 0], 'still waiting: nothing before ten minutes')
    clock.advance(1)
    await waitFor('the failure reported', () => reports.length === 1)
    assert.match(String((reports[0] as { error: Error }).error), /the database is busy/)
    await waitFor('the next run scheduled', () => clock.pendingTimers === 1)

    failing = false
    await db.exec('CREATE TABLE grown (id integer PRIMARY KEY); INSERT INTO grown SELECT generate_series(1, 60)')
    clock.advance(600_000)
    await waitFor('the next run reported', () => reports.length === 2)
    assert.deepEqual((reports[1] as { run: { analyzed: string[] } }).run.analyzed, ['public.grown'])
  })
})
