import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { appliedVersions, runMigrations, type Migration } from '../../src/db/migrate.js'
import { MIGRATIONS } from '../../src/db/migrations/schema-history.js'
import { openDatabase } from '../../src/db/open-database.js'
import { PaymentOutbox } from '../../src/payments/payment-outbox.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })

/** The versions after `version`: what a database at `version` is brought forward by. */
const versionsAfter = (version: number): number[] => MIGRATIONS.slice(version).map(migration => migration.version)

async function tables (db: { query: (text: string) => Promise<{ rows: Array<Record<string, unknown>> }> }): Promise<string[]> {
  const { rows } = await db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
  return rows.map(row => String(row.table_name))
}

for (const backend of backends(postgres)) {
  describe(`migrations on the ${backend.name} database`, () => {
    it('build the whole schema from an empty database, and find nothing to do the second time', async (t) => {
      // Named: with none, the embedded backend copies a database migrated already.
      const db = await backend.open(t, MIGRATIONS)
      assert.deepEqual(await appliedVersions(db), versionsAfter(0))
      assert.deepEqual(await tables(db), ['chain_cursors', 'entitlement_grants', 'invoices', 'leases', 'notification_budget', 'notification_channels', 'notification_deliveries', 'notification_keys', 'outbox', 'outbox_events', 'payment_sightings', 'payments', 'payout_inputs', 'payout_log', 'payout_wallet', 'payouts', 'schema_migrations', 'storage_items', 'storage_usage', 'telegram_link_nonces', 'webhook_deliveries'])
      assert.deepEqual(await runMigrations(db, MIGRATIONS), [])
    })

    it('bring a database of the previous version forward, keeping its data and giving its events to the outbox', async (t) => {
      const db = await backend.open(t, MIGRATIONS.slice(0, 1))
      assert.deepEqual(await appliedVersions(db), [1])
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_old', 150000000, 'm', 'old-memo', 'expired', 1, 10, 1, 10, 1)`)
      await db.query('INSERT INTO payment_events (invoice_id, sequence, type, payload, created_at_ms) VALUES ($1, 1, $2, $3, 10)', ['inv_old', 'expired', { previousState: 'pending' }])
      assert.deepEqual(await runMigrations(db, MIGRATIONS), versionsAfter(1))
      assert.deepEqual(await appliedVersions(db), versionsAfter(0))
      const { rows: invoices } = await db.query('SELECT id, amount_sat, state FROM invoices')
      assert.deepEqual(invoices, [{ id: 'inv_old', amount_sat: 150_000_000, state: 'expired' }])
      const { rows: outbox } = await db.query('SELECT consumer, attempts, delivered_at_ms, status FROM outbox')
      assert.deepEqual(outbox, [{ consumer: 'app', attempts: 0, delivered_at_ms: null, status: 'pending' }])
    })

    it('bring a database of version 3 forward to sightings: its invoices keep their expiry webhooks', async (t) => {
      const db = await backend.open(t, MIGRATIONS.slice(0, 3))
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_v3', 1000, 'm', 'v3-memo', 'pending', 1, 10, 1, 10, 1)`)
      assert.deepEqual(await runMigrations(db, MIGRATIONS), versionsAfter(3))
      assert.deepEqual((await db.query('SELECT id, expiry_webhook FROM invoices')).rows, [{ id: 'inv_v3', expiry_webhook: true }])
      await assert.rejects(db.query("INSERT INTO payment_sightings (txid, sighted_at_ms, available_at_ms) VALUES ('not-a-txid', 1, 1)"), { code: '23514' })
    })

    it('bring a database of version 4 forward to outbox statuses, each row\'s from the times that said it', async (t) => {
      const db = await backend.open(t, MIGRATIONS.slice(0, 4))
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_v4', 1000, 'm', 'v4-memo', 'expired', 1, 10, 1, 10, 1)`)
      const GIVEN_UP_BEFORE = '9007199254740991'
      // One row in each state as version 4 wrote it: [event sequence, available_at_ms, attempts, delivered_at_ms].
      const old: Array<[number, string, number, number | null]> = [
        [1, '400', 1, 500], // delivered
        [2, GIVEN_UP_BEFORE, 12, null], // given up
        [3, '0', 0, null], // pending, due at once
        [4, '2000000', 3, null], // pending, waiting for a retry or a claim's lease
        [5, GIVEN_UP_BEFORE, 12, 900], // given up, then delivered by an attempt that finished late
      ]
      for (const [sequence, availableAtMs, attempts, deliveredAtMs] of old) {
        const { rows } = await db.query<{ id: number }>("INSERT INTO payment_events (invoice_id, sequence, type, payload, created_at_ms) VALUES ('inv_v4', $1, 'expired', '{}', 10) RETURNING id", [sequence])
        await db.query("INSERT INTO outbox (event_id, consumer, available_at_ms, attempts, delivered_at_ms) VALUES ($1, 'webhook', $2, $3, $4)", [rows[0]?.id, availableAtMs, attempts, deliveredAtMs])
      }
      assert.deepEqual(await runMigrations(db, MIGRATIONS), versionsAfter(4))

      const { rows } = await db.query('SELECT e.sequence, o.status, o.available_at_ms, o.attempts, o.delivered_at_ms FROM outbox o JOIN outbox_events e ON e.id = o.event_id ORDER BY e.sequence')
      assert.deepEqual(rows, [
        { sequence: 1, status: 'delivered', available_at_ms: 400, attempts: 1, delivered_at_ms: 500 },
        { sequence: 2, status: 'given_up', available_at_ms: 0, attempts: 12, delivered_at_ms: null },
        { sequence: 3, status: 'pending', available_at_ms: 0, attempts: 0, delivered_at_ms: null },
        { sequence: 4, status: 'pending', available_at_ms: 2_000_000, attempts: 3, delivered_at_ms: null },
        { sequence: 5, status: 'delivered', available_at_ms: 9_007_199_254_740_991, attempts: 12, delivered_at_ms: 900 },
      ])
      const { rows: indexes } = await db.query("SELECT indexname FROM pg_indexes WHERE tablename = 'outbox' ORDER BY indexname")
      assert.deepEqual(indexes.map(row => row.indexname), ['outbox_given_up', 'outbox_pending_due', 'outbox_pkey'])

      // The outbox reads the migrated rows by their status.
      const outbox = new PaymentOutbox(db, { now: () => 1_000_000 })
      assert.deepEqual(await outbox.backlog('webhook'), { pending: 2, givenUp: 1 })
      assert.deepEqual((await outbox.claim('webhook')).map(event => [event.idempotencyKey, event.attempts]), [['inv_v4:3', 1]], 'the due one, not the given-up one')
      assert.equal(await outbox.nextDueAt('webhook'), 1_000_000 + 30_000)
      await assert.rejects(db.query("INSERT INTO outbox (event_id, consumer, status) SELECT id, 'app', 'lost' FROM outbox_events LIMIT 1"), { code: '23514' })
    })

    it('bring a database of version 6 forward to storage, its invoices untouched', async (t) => {
      const db = await backend.open(t, MIGRATIONS.slice(0, 6))
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_v6', 1000, 'm', 'v6-memo', 'pending', 1, 10, 1, 10, 1)`)
      assert.deepEqual(await runMigrations(db, MIGRATIONS), versionsAfter(6))
      assert.deepEqual((await db.query('SELECT id, state FROM invoices')).rows, [{ id: 'inv_v6', state: 'pending' }])
      assert.deepEqual((await db.query('SELECT count(*)::integer AS n FROM storage_items UNION ALL SELECT count(*)::integer FROM storage_usage')).rows, [{ n: 0 }, { n: 0 }])
      // Keys sort by their bytes (COLLATE "C"), the same on every server: the listing's cursor depends on it.
      await db.query("INSERT INTO storage_usage (space, owner) VALUES ('user', 'P1')")
      for (const key of ['b', 'B', '_', 'a', '-', 'Z']) {
        await db.query("INSERT INTO storage_items (space, owner, key, value, size, version, updated_at_ms) VALUES ('user', 'P1', $1, '1', $2, 'AAAAAAAAAAAAAAAA', 0)", [key, key.length + 1])
      }
      const { rows } = await db.query<{ key: string }>("SELECT key FROM storage_items WHERE owner = 'P1' AND key > 'B' ORDER BY key")
      assert.deepEqual(rows.map(row => row.key), ['Z', '_', 'a', 'b'])
      await assert.rejects(db.query("INSERT INTO storage_usage (space, owner) VALUES ('team', 'x')"), { code: '23514' })
    })

    it('roll a failing migration back whole, recording nothing', async (t) => {
      const db = await backend.open(t)
      const failing: Migration = { version: MIGRATIONS.length + 1, name: 'fails-halfway', sql: 'CREATE TABLE half_done (id integer); SELECT 1 / 0;' }
      await assert.rejects(runMigrations(db, [...MIGRATIONS, failing]), { code: '22012' })
      assert.deepEqual(await appliedVersions(db), versionsAfter(0))
      assert.equal((await tables(db)).includes('half_done'), false)
    })

    it('refuse a database migrated by newer code, and an applied migration that was edited', async (t) => {
      const db = await backend.open(t)
      await assert.rejects(runMigrations(db, MIGRATIONS.slice(0, 1)), { code: 'DB_ERR_SCHEMA_NEWER' })
      const edited = [{ ...MIGRATIONS[0] as Migration, sql: `${(MIGRATIONS[0] as Migration).sql}\n-- edited` }, ...MIGRATIONS.slice(1)]
      await assert.rejects(runMigrations(db, edited), { code: 'DB_ERR_MIGRATION_CHANGED' })
    })

    it('refuse versions out of order', async (t) => {
      const db = await backend.open(t, [])
      await assert.rejects(runMigrations(db, [MIGRATIONS[1] as Migration]), { name: 'TypeError', message: /versions are 1, 2, 3 …/ })
    })
  })
}

describe('migrations with several instances starting at once', () => {
  it('apply each version once', async (t) => {
    const url = await postgres.freshDatabase()
    const dbs = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ databaseUrl: url })))
    t.after(() => Promise.all(dbs.map(db => db.close())))
    assert.deepEqual(await appliedVersions(dbs[0] as never), versionsAfter(0))
  })
})
