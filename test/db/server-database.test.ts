import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { after, describe, it } from 'node:test'
import { safeInteger, sqlState, violatedConstraint } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { startPostgres } from '../helpers/start-postgres.js'

const postgres = await startPostgres({ after })

describe('the PostgreSQL server database', () => {
  it('fails to open on a server that accepts and never answers, instead of waiting for ever', async (t) => {
    const silent = createServer()
    const held: Socket[] = []
    silent.on('connection', socket => { held.push(socket) })
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    t.after(() => { for (const socket of held) socket.destroy(); silent.close() })
    const { port } = silent.address() as { port: number }
    await assert.rejects(openServerDatabase(`postgres://user:secret@127.0.0.1:${port}/app`, { connectTimeoutMs: 200 }), /timeout/i)
    assert.ok(held.length >= 1, 'it did connect')
  })

  it('runs a transaction again when it lost a serialization conflict or a deadlock, and not for other errors', async (t) => {
    const db = await openDatabase({ databaseUrl: await postgres.freshDatabase() })
    t.after(() => db.close())
    assert.equal(db.kind, 'server')
    let attempts = 0
    const result = await db.transaction(async sql => {
      attempts++
      await sql.query("INSERT INTO leases (name, holder, expires_at_ms) VALUES ('retried', $1, 1)", [`attempt ${attempts}`])
      if (attempts < 3) throw Object.assign(new Error('conflict'), { code: attempts === 1 ? '40001' : '40P01' })
      return 'done'
    })
    assert.deepEqual([result, attempts], ['done', 3])
    assert.deepEqual((await db.query('SELECT holder FROM leases')).rows, [{ holder: 'attempt 3' }], 'the failed attempts were rolled back')
    let failures = 0
    await assert.rejects(db.transaction(async () => {
      failures++
      throw Object.assign(new Error('unique'), { code: '23505' })
    }), { code: '23505' })
    assert.equal(failures, 1)
  })

  it('gives up after five attempts', async (t) => {
    const db = await openDatabase({ databaseUrl: await postgres.freshDatabase() })
    t.after(() => db.close())
    let attempts = 0
    await assert.rejects(db.transaction(async () => {
      attempts++
      throw Object.assign(new Error('conflict'), { code: '40001' })
    }), { code: '40001' })
    assert.equal(attempts, 5)
  })

  it('reads BIGINT as numbers while safe, and reports constraint violations with their SQLSTATE and name', async (t) => {
    const db = await openDatabase({ databaseUrl: await postgres.freshDatabase() })
    t.after(() => db.close())
    assert.deepEqual((await db.query('SELECT 9007199254740991::bigint AS safe, 9007199254740992::bigint AS beyond')).rows, [{ safe: Number.MAX_SAFE_INTEGER, beyond: 9007199254740992n }])
    await db.query("INSERT INTO leases (name, holder, expires_at_ms) VALUES ('once', 'a', 1)")
    const error = await db.query("INSERT INTO leases (name, holder, expires_at_ms) VALUES ('once', 'b', 1)").catch((err: unknown) => err)
    assert.deepEqual([sqlState(error), violatedConstraint(error)], ['23505', 'leases_pkey'])
  })

  it('fails to open, and leaves nothing open, when the server is not there', async () => {
    await assert.rejects(openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none' }), { code: 'ECONNREFUSED' })
  })
})

describe('values from the database', () => {
  it('are safe integers, or a TypeError naming the column', () => {
    assert.equal(safeInteger(5, 'n'), 5)
    assert.throws(() => safeInteger('5', 'amount_sat'), { name: 'TypeError', message: 'column amount_sat holds "5", not a safe integer' })
    assert.throws(() => safeInteger(2n ** 60n, 'amount_sat'), { message: /1152921504606846976 \(beyond the safe integers\)/ })
    assert.equal(sqlState(new Error('x')), undefined)
    assert.equal(sqlState(null), undefined)
    assert.equal(violatedConstraint({}), undefined)
  })
})
