/**
 * The embedded database's statements in one call into PGlite (src/db/extended-query.ts) lean on
 * PGlite's low-level protocol calls, which an upgrade may change: these tests pin that they give
 * exactly what `pglite.query()` gives (rows, counts, errors), that the session stays usable after
 * an error, in and out of transactions, and that each SQL text is parsed once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { sqlState, violatedConstraint } from '../../src/db/database.js'
import { ExtendedQuery, MAX_PREPARED_STATEMENTS } from '../../src/db/extended-query.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })

const SCHEMA = `
CREATE TABLE things (
  id text PRIMARY KEY,
  n bigint,
  small integer CHECK (small >= 0),
  flag boolean,
  doc jsonb,
  tags text[],
  at timestamptz,
  amount numeric,
  raw bytea
);
CREATE FUNCTION pair (a text, b bigint, OUT x text, OUT y bigint) LANGUAGE sql AS $$ SELECT a, b $$;
`

const AWKWARD = ['plain', 'with space', 'comma,inside', 'quote"inside', 'back\\slash', '{braces}', '', 'NULL', 'ünïcode ✓']

/** Statements with every kind of parameter the service sends, and what they must answer. */
const STATEMENTS: Array<{ what: string, text: string, params: unknown[] }> = [
  { what: 'no parameters', text: 'SELECT 1 AS one', params: [] },
  { what: 'text and integer', text: 'SELECT $1::text AS t, $2::integer AS i', params: ['hello', 42] },
  { what: 'a bigint, safe', text: 'SELECT $1::bigint AS n', params: [Number.MAX_SAFE_INTEGER] },
  { what: 'a bigint beyond the safe integers', text: 'SELECT $1::bigint AS n', params: [2n ** 62n] },
  { what: 'booleans', text: 'SELECT $1::boolean AS yes, $2::boolean AS no', params: [true, false] },
  { what: 'NULL and undefined', text: 'SELECT $1::text AS a, $2::bigint AS b', params: [null, undefined] },
  { what: 'an insert of every column', text: 'INSERT INTO things (id, n, small, flag, doc, tags, at, amount, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *', params: ['a', 1_700_000_000_000, 3, true, { nested: { list: [1, 'two', null] }, text: 'é"\\' }, AWKWARD, new Date('2024-05-06T07:08:09.123Z'), '12345.6789', new Uint8Array([0, 1, 254, 255])] },
  { what: 'jsonb given as JSON text', text: 'INSERT INTO things (id, doc) VALUES ($1, $2) RETURNING doc', params: ['b', '{"from":"text"}'] },
  { what: 'empty and NULL arrays', text: 'INSERT INTO things (id, tags) VALUES ($1, $2), ($3, $4) RETURNING tags', params: ['c', [], 'd', null] },
  { what: 'ANY of a text[]', text: 'SELECT id FROM things WHERE id = ANY($1::text[]) ORDER BY id', params: [['a', 'c', 'zz']] },
  { what: 'unnest of a text[]', text: 'SELECT t FROM unnest($1::text[]) AS t', params: [AWKWARD] },
  { what: 'an update counted', text: 'UPDATE things SET n = $1 WHERE id = ANY($2::text[])', params: [7, ['a', 'b', 'c']] },
  { what: 'a function with OUT parameters', text: 'SELECT * FROM pair($1, $2)', params: ['x', 9] },
  { what: 'a count cast to integer', text: 'SELECT count(*)::integer AS count FROM things WHERE n > $1', params: [0] },
  { what: 'a delete counted', text: 'DELETE FROM things WHERE id = $1', params: ['d'] },
]

describe('statements in one call into PGlite', () => {
  let pglite: PGlite
  let reference: PGlite
  let extended: ExtendedQuery
  before(async () => {
    [pglite, reference] = await Promise.all([PGlite.create(), PGlite.create()])
    await pglite.exec(SCHEMA)
    await reference.exec(SCHEMA)
    extended = new ExtendedQuery(pglite)
  })
  after(async () => { await Promise.all([pglite.close(), reference.close()]) })

  async function preparedCount (): Promise<number> {
    const { rows } = await pglite.query<{ count: number }>('SELECT count(*)::integer AS count FROM pg_prepared_statements')
    return rows[0]!.count
  }

  it('answers every kind of parameter exactly as pglite.query() does', async () => {
    // Twice: once parsing each statement, once reusing it.
    for (const time of ['first', 'second']) {
      await pglite.exec('TRUNCATE things')
      await reference.exec('TRUNCATE things')
      for (const { what, text, params } of STATEMENTS) {
        const expected = await reference.query(text, params)
        const actual = await extended.query(text, params)
        assert.deepEqual(actual, expected, `${what}, ${time} time`)
      }
    }
    const { rows } = await extended.query<{ doc: unknown, tags: unknown, n: unknown, at: unknown, raw: unknown }>('SELECT doc, tags, n, at, raw FROM things WHERE id = $1', ['a'])
    assert.deepEqual(rows, [{ doc: { nested: { list: [1, 'two', null] }, text: 'é"\\' }, tags: AWKWARD, n: 7, at: new Date('2024-05-06T07:08:09.123Z'), raw: new Uint8Array([0, 1, 254, 255]) }])
  })

  it('parses each SQL text once, and keeps the statement after the transaction that parsed it rolled back', async () => {
    const before = await preparedCount()
    const text = 'SELECT $1::integer + 1 AS next'
    await pglite.exec('BEGIN')
    assert.deepEqual((await extended.query(text, [1])).rows, [{ next: 2 }])
    await pglite.exec('ROLLBACK')
    for (let i = 2; i < 12; i++) assert.deepEqual((await extended.query(text, [i])).rows, [{ next: i + 1 }])
    assert.equal(await preparedCount(), before + 1)
  })

  it('fails as pglite.query() fails, with SQLSTATE and constraint, and the session goes on', async () => {
    const failing: Array<{ text: string, params: unknown[], code: string, constraint?: string }> = [
      { text: 'INSERT INTO things (id) VALUES ($1)', params: ['a'], code: '23505', constraint: 'things_pkey' },
      { text: 'INSERT INTO things (id, small) VALUES ($1, $2)', params: ['neg', -1], code: '23514', constraint: 'things_small_check' },
      { text: 'SELEC $1', params: [1], code: '42601' },
      { text: 'SELECT $1::integer AS i', params: ['not a number'], code: '22P02' },
      { text: 'SELECT * FROM no_such_table WHERE id = $1', params: ['a'], code: '42P01' },
    ]
    await reference.query('INSERT INTO things (id) VALUES ($1)', ['a']).catch(() => {})
    for (const { text, params, code, constraint } of failing) {
      for (const time of ['first', 'second']) {
        const expected = await reference.query(text, params).then(() => assert.fail('the reference did not fail'), (error: unknown) => error)
        const actual = await extended.query(text, params).then(() => assert.fail(`${text} did not fail`), (error: unknown) => error)
        assert.equal(sqlState(actual), code, `${text}, ${time} time`)
        assert.equal(violatedConstraint(actual), constraint, text)
        assert.ok(actual instanceof Error)
        assert.deepEqual({ ...actual as object, message: (actual as Error).message }, { ...expected as object, message: (expected as Error).message }, text)
        assert.equal(pglite.isInTransaction(), false, 'the Sync was processed')
        assert.deepEqual((await extended.query('SELECT $1::text AS after', ['ok'])).rows, [{ after: 'ok' }])
      }
    }
  })

  it('inside a transaction, fails it as a statement does, and the session is usable after ROLLBACK', async () => {
    await pglite.exec('BEGIN')
    await extended.query('INSERT INTO things (id) VALUES ($1)', ['in-tx'])
    await assert.rejects(extended.query('INSERT INTO things (id) VALUES ($1)', ['in-tx']), { code: '23505', constraint: 'things_pkey' })
    assert.equal(pglite.isInTransaction(), true)
    await assert.rejects(extended.query('SELECT $1::text AS t', ['x']), { code: '25P02' })
    await assert.rejects(extended.query('SELECT $1::text AS never_parsed_before', ['x']), { code: '25P02' })
    await pglite.exec('ROLLBACK')
    assert.deepEqual((await extended.query('SELECT count(*)::integer AS count FROM things WHERE id = $1', ['in-tx'])).rows, [{ count: 0 }])
    assert.deepEqual((await extended.query('SELECT $1::text AS never_parsed_before', ['y'])).rows, [{ never_parsed_before: 'y' }])
  })

  it('parses a statement again when the schema changed its result, and inside a transaction fails it once', async () => {
    await pglite.exec('CREATE TABLE shifting (id text PRIMARY KEY)')
    await pglite.exec("INSERT INTO shifting VALUES ('a')")
    const text = 'SELECT * FROM shifting WHERE id = $1'
    assert.deepEqual((await extended.query(text, ['a'])).rows, [{ id: 'a' }])
    await pglite.exec("ALTER TABLE shifting ADD COLUMN extra text NOT NULL DEFAULT 'e'")
    assert.deepEqual((await extended.query(text, ['a'])).rows, [{ id: 'a', extra: 'e' }])
    await pglite.exec('ALTER TABLE shifting DROP COLUMN extra')
    await pglite.exec('BEGIN')
    await assert.rejects(extended.query(text, ['a']), { code: '0A000' })
    await pglite.exec('ROLLBACK')
    assert.deepEqual((await extended.query(text, ['a'])).rows, [{ id: 'a' }])
  })

  it(`keeps at most ${MAX_PREPARED_STATEMENTS} statements, closing the oldest`, async () => {
    const before = await preparedCount()
    for (let i = 0; i < MAX_PREPARED_STATEMENTS + 20; i++) {
      assert.deepEqual((await extended.query(`SELECT $1::integer AS n${i}`, [i])).rows, [{ [`n${i}`]: i }])
    }
    const now = await preparedCount()
    assert.ok(now <= MAX_PREPARED_STATEMENTS + 1, `${now} statements kept`)
    assert.ok(now >= Math.min(before, MAX_PREPARED_STATEMENTS - 1), `${now} statements kept`)
    assert.deepEqual((await extended.query('SELECT $1::integer AS n0', [5])).rows, [{ n0: 5 }], 'a closed statement is parsed again')
  })
})

for (const backend of backends(postgres)) {
  describe(`statements with parameters on the ${backend.name} database`, () => {
    it('give the same rows and counts on both databases, in and out of transactions', async (t) => {
      const db = await backend.open(t, [])
      await db.exec(SCHEMA)
      const outside = []
      for (const { text, params } of STATEMENTS) {
        const { rows, rowCount } = await db.query(text, params)
        outside.push({ rows, rowCount })
      }
      assert.deepEqual(outside.at(-4), { rows: [], rowCount: 3 }, 'the update')
      assert.deepEqual(outside.at(-1), { rows: [], rowCount: 1 }, 'the delete')
      assert.deepEqual(outside[6]!.rows, [{ id: 'a', n: 1_700_000_000_000, small: 3, flag: true, doc: { nested: { list: [1, 'two', null] }, text: 'é"\\' }, tags: AWKWARD, at: new Date('2024-05-06T07:08:09.123Z'), amount: '12345.6789', raw: backend.name === 'server' ? Buffer.from([0, 1, 254, 255]) : new Uint8Array([0, 1, 254, 255]) }])
      assert.deepEqual(outside[3]!.rows, [{ n: 2n ** 62n }])
      assert.deepEqual(outside[5]!.rows, [{ a: null, b: null }])
      assert.deepEqual(outside[10]!.rows.map(row => (row as { t: string }).t), AWKWARD)
      const inside = await db.transaction(async sql => {
        const { rows } = await sql.query('INSERT INTO things (id, tags) VALUES ($1, $2) RETURNING tags', ['tx', ['in', 'side']])
        const again = await sql.query('SELECT id FROM things WHERE id = ANY($1::text[]) ORDER BY id', [['a', 'tx']])
        return [rows, again.rows]
      })
      assert.deepEqual(inside, [[{ tags: ['in', 'side'] }], [{ id: 'a' }, { id: 'tx' }]])
    })

    it('fail with SQLSTATE and constraint, roll a transaction back, and go on', async (t) => {
      const db = await backend.open(t, [])
      await db.exec(SCHEMA)
      await db.query('INSERT INTO things (id) VALUES ($1)', ['a'])
      const error = await db.query('INSERT INTO things (id) VALUES ($1)', ['a']).catch((error: unknown) => error)
      assert.deepEqual([sqlState(error), violatedConstraint(error)], ['23505', 'things_pkey'])
      await assert.rejects(db.transaction(async sql => {
        await sql.query('INSERT INTO things (id) VALUES ($1)', ['rolled back'])
        await sql.query('INSERT INTO things (id, small) VALUES ($1, $2)', ['b', -1])
      }), (error: unknown) => sqlState(error) === '23514' && violatedConstraint(error) === 'things_small_check')
      assert.deepEqual((await db.query('SELECT id FROM things ORDER BY id')).rows, [{ id: 'a' }])
    })
  })
}
