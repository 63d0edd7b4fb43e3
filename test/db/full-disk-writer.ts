/**
 * For the full-disk test: opens the embedded database in the data directory given (on a file
 * system the test filled up), commits one row, then writes WAL (a megabyte per statement, no
 * table grows) until a statement fails, and reports on stdout, a JSON object a line, what the
 * failure and every call after it did: `{"step":"failed","code":…,"message":…}`, then `later`,
 * `transaction` and `closed`. With `in-transaction`, each write is a transaction of its own; with
 * `default-fatal`, no `onFatal` is given (the error is then thrown uncaught).
 *
 *   node --import tsx test/db/full-disk-writer.ts <dataDir> [in-transaction|default-fatal]
 */
import type { DatabaseError } from '../../src/db/errors.js'
import { openDatabase } from '../../src/db/open-database.js'

const [dataDir, mode = ''] = process.argv.slice(2)
if (dataDir === undefined) throw new Error('usage: full-disk-writer.ts <dataDir> [in-transaction|default-fatal]')

const report = (step: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ step, ...fields })}\n`)
}
const outcome = (error: unknown) => ({ code: (error as { code?: unknown }).code, message: (error as Error).message })

const onFatal = mode === 'default-fatal' ? undefined : (error: DatabaseError) => { report('fatal', outcome(error)) }
const db = await openDatabase({ dataDir, ...(onFatal === undefined ? {} : { onFatal }) })
await db.exec('CREATE TABLE kept (n integer)')
await db.query('INSERT INTO kept VALUES (1)')
report('open')

// A WAL record of a megabyte, in no table: the log fills the disk before any table could.
const WRITE = "SELECT pg_logical_emit_message(false, 'fill', repeat('x', 1000000))"
try {
  // More than a WAL segment (16 MB): the log needs a new segment file long before the end.
  for (let megabytes = 0; megabytes < 64; megabytes++) {
    if (mode === 'in-transaction') await db.transaction(sql => sql.query(WRITE))
    else await db.query(WRITE)
  }
  report('no failure')
  process.exit(2)
} catch (error) {
  report('failed', outcome(error))
}
await db.query('SELECT 1').then(() => report('later', { code: 'answered' }), (error: unknown) => report('later', outcome(error)))
await db.transaction(sql => sql.query('INSERT INTO kept VALUES (2)')).then(() => report('transaction', { code: 'committed' }), (error: unknown) => report('transaction', outcome(error)))
await db.close()
report('closed')
