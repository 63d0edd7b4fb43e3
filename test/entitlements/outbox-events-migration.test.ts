/**
 * Migration 9 (`outbox-events`) on both databases: a database of version 8 with invoice events,
 * their outbox rows and a grant is brought forward, its events still deliver (to the webhook, with
 * their keys, and to the app's handlers), and its grants get events; the checks hold whatever the
 * code does: an invoice's event has its invoice and sequence and no grant, an entitlement's event
 * the reverse, a grant is told granted once and revoked once, an invoice confirmed once.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { after, describe, it } from 'node:test'
import { runMigrations } from '../../src/db/migrate.js'
import { MIGRATIONS } from '../../src/db/migrations/schema-history.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import type { Invoice } from '../../src/payments/invoice.js'
import { PaymentOutbox } from '../../src/payments/payment-outbox.js'
import { WebhookDeliveryLog } from '../../src/payments/webhook-deliveries.js'
import { WEBHOOK_CONSUMER, WebhookSender } from '../../src/payments/webhook-sender.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER } from '../payments/chain-transactions.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })
/** Every migration before this one (found by its name: its number may change on a merge). */
const before = MIGRATIONS.slice(0, MIGRATIONS.findIndex(migration => migration.name === 'outbox-events'))
const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuvwxyz'
const NOW = 1_800_000_000_000

/** The invoice as version 8's code wrote it into its events' payload. */
const OLD_INVOICE: Invoice = {
  id: 'inv_v8',
  amountSat: 1000,
  receiver: MERCHANT,
  memo: 'v8-memo',
  metadata: {},
  state: 'expired',
  confirmationsRequired: 1,
  expiresAtMs: 10,
  createdAtMs: 1,
  updatedAtMs: 10,
  version: 1,
  txid: null,
  confirmations: 0,
  underpaid: false,
  underpaidSat: 0,
  overpaid: false,
  overpaidSat: 0,
  paidLate: false,
  paidLateSat: 0,
  grant: null,
}

for (const backend of backends(postgres)) {
  describe(`the outbox-events migration on the ${backend.name} database`, () => {
    it('brings a database of version 8 forward: its events deliver as before, and its grants get events', async (t) => {
      assert.equal(before.length, 8)
      const db = await backend.open(t, before)
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_v8', 1000, $1, 'v8-memo', 'expired', 1, 10, 1, 10, 1)`, [MERCHANT])
      const { rows: [old] } = await db.query<{ id: number }>("INSERT INTO payment_events (invoice_id, sequence, type, payload, created_at_ms) VALUES ('inv_v8', 1, 'expired', $1, 10) RETURNING id::integer AS id",
        [{ previousState: 'pending', invoice: OLD_INVOICE }])
      await db.query("INSERT INTO outbox (event_id, consumer) VALUES ($1, 'app'), ($1, 'webhook')", [old!.id])
      await db.query("INSERT INTO webhook_deliveries (event_id, url, attempt, started_at_ms, finished_at_ms, status_code, error) VALUES ($1, 'http://127.0.0.1/', 1, 5, 6, 500, 'answered 500')", [old!.id])
      const { rows: [oldGrant] } = await db.query<{ id: number }>("INSERT INTO entitlement_grants (address, sku, granted_at_ms, starts_at_ms, reason) VALUES ($1, 'legacy', 5, 5, 'before 9') RETURNING id::integer AS id", [PAYER])

      assert.deepEqual(await runMigrations(db, MIGRATIONS), MIGRATIONS.slice(before.length).map(migration => migration.version))
      const { rows: tables } = await db.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE '%events' ORDER BY 1")
      assert.deepEqual(tables.map(row => row.name), ['outbox_events'])

      // A revocation of the grant made before: an event of its own, for the webhook.
      const grants = new EntitlementStore(db, { now: () => NOW, consumers: [WEBHOOK_CONSUMER] })
      assert.deepEqual((await grants.revoke(PAYER, 'legacy', 'migrated away')).map(grant => grant.id), [oldGrant!.id])

      const received: string[] = []
      const receiver = createServer(async (request, response) => {
        const chunks: Buffer[] = []
        for await (const chunk of request) chunks.push(chunk as Buffer)
        received.push(Buffer.concat(chunks).toString('utf8'))
        response.writeHead(204).end()
      })
      await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
      t.after(() => new Promise(resolve => receiver.close(resolve)))
      const outbox = new PaymentOutbox(db, { now: () => NOW })
      const deliveries = new WebhookDeliveryLog(db)
      const sender = new WebhookSender({ outbox, deliveries, url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`, secret: SECRET, timeoutMs: 10_000, log: { info () {}, warn () {}, error () {} }, now: () => NOW })
      t.after(() => sender.close())
      sender.wake()
      await sender.whenIdle()

      const bodies = received.map(body => JSON.parse(body)).sort((a, b) => (a.id < b.id ? -1 : 1))
      assert.deepEqual(bodies.map(body => [body.id, body.type]), [[`grant:${oldGrant!.id}:revoked`, 'entitlementRevoked'], ['inv_v8:1', 'expired']])
      assert.deepEqual([bodies[1].invoiceId, bodies[1].invoice.state, bodies[1].invoice.memo], ['inv_v8', 'expired', 'v8-memo'])
      assert.deepEqual(bodies[0].entitlement, { address: PAYER, sku: 'legacy', grantedAt: new Date(5).toISOString(), expiresAt: null, invoiceId: null, reason: 'migrated away' })
      assert.deepEqual((await deliveries.list(old!.id)).map(attempt => [attempt.attempt, attempt.statusCode]), [[1, 500], [1, 204]], 'the old attempt kept, the new one beside it')
      // The app's handlers: the old event, as it was.
      const [forApp] = await outbox.claim('app')
      assert.deepEqual([forApp?.id, forApp?.idempotencyKey, forApp?.type], [old!.id, 'inv_v8:1', 'expired'])
      assert.deepEqual(await outbox.claim('app'), [])
    })

    it('refuses events that are half an invoice\'s and half a grant\'s, a grant told twice, an invoice confirmed twice', async (t) => {
      const db = await backend.open(t)
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_c', 1000, $1, 'c-memo', 'expired', 1, 10, 1, 10, 1)`, [MERCHANT])
      const { rows: [grant] } = await db.query<{ id: number }>("INSERT INTO entitlement_grants (address, sku, granted_at_ms, starts_at_ms) VALUES ($1, 'checked', 5, 5) RETURNING id::integer AS id", [PAYER])
      const insert = (columns: { invoice_id?: string | null, sequence?: number | null, grant_id?: number | null, type: string }) => db.query(
        "INSERT INTO outbox_events (invoice_id, sequence, grant_id, type, payload, created_at_ms) VALUES ($1, $2, $3, $4, '{}', 10)",
        [columns.invoice_id ?? null, columns.sequence ?? null, columns.grant_id ?? null, columns.type])
      const CHECK = { code: '23514' }
      const UNIQUE = { code: '23505' }
      await assert.rejects(insert({ sequence: 1, type: 'expired' }), CHECK, 'an invoice event without its invoice')
      await assert.rejects(insert({ invoice_id: 'inv_c', type: 'expired' }), CHECK, 'an invoice event without its sequence')
      await assert.rejects(insert({ invoice_id: 'inv_c', sequence: 1, grant_id: grant!.id, type: 'confirmed' }), CHECK, 'an invoice event with a grant')
      await assert.rejects(insert({ type: 'entitlementGranted' }), CHECK, 'an entitlement event without its grant')
      await assert.rejects(insert({ invoice_id: 'inv_c', grant_id: grant!.id, type: 'entitlementRevoked' }), CHECK, 'an entitlement event with an invoice')
      await assert.rejects(insert({ grant_id: grant!.id, sequence: 1, type: 'entitlementGranted' }), CHECK, 'an entitlement event with a sequence')
      await assert.rejects(insert({ grant_id: grant!.id, type: 'entitlementRenewed' }), CHECK, 'a type nobody knows')
      await assert.rejects(insert({ grant_id: grant!.id + 1000, type: 'entitlementGranted' }), { code: '23503' }, 'a grant that does not exist')

      await insert({ grant_id: grant!.id, type: 'entitlementGranted' })
      await assert.rejects(insert({ grant_id: grant!.id, type: 'entitlementGranted' }), UNIQUE, 'a grant told granted twice')
      await insert({ grant_id: grant!.id, type: 'entitlementRevoked' })
      await assert.rejects(insert({ grant_id: grant!.id, type: 'entitlementRevoked' }), UNIQUE, 'a grant told revoked twice')

      await insert({ invoice_id: 'inv_c', sequence: 1, type: 'seen' })
      await assert.rejects(insert({ invoice_id: 'inv_c', sequence: 1, type: 'overpaid' }), UNIQUE, 'one sequence per invoice, as before')
      await insert({ invoice_id: 'inv_c', sequence: 2, type: 'confirmed' })
      await assert.rejects(insert({ invoice_id: 'inv_c', sequence: 3, type: 'confirmed' }), UNIQUE, 'confirmed once, as before')
      const { rows: names } = await db.query<{ name: string }>("SELECT conname AS name FROM pg_constraint WHERE conrelid = 'outbox_events'::regclass AND conname NOT LIKE 'outbox\\_events\\_%'")
      assert.deepEqual(names, [], 'every constraint named for the table')
    })
  })
}
