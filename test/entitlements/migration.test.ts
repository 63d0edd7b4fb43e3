/**
 * The entitlements' migration brings a database of the previous version forward: its invoices and
 * their events read as granting nothing, and a grant can be written for one of its invoices.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { runMigrations } from '../../src/db/migrate.js'
import { MIGRATIONS } from '../../src/db/migrations/schema-history.js'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT } from '../payments/chain-transactions.js'
import { backends } from '../payments/databases.js'

const postgres = await startPostgres({ after })
/** Every migration before the entitlements' (found by its name: its number may change on a merge). */
const before = MIGRATIONS.slice(0, MIGRATIONS.findIndex(migration => migration.name === 'entitlements'))

for (const backend of backends(postgres)) {
  describe(`the entitlements migration on the ${backend.name} database`, () => {
    it('keeps invoices and events written before it, each granting nothing', async (t) => {
      const db = await backend.open(t, before)
      const old = await new InvoiceStore(db).createInvoice({ amountSat: 1000, receiver: MERCHANT, expiresInS: 60, confirmations: 1 }).catch(() => undefined)
      assert.equal(old, undefined, 'the previous version has no grant columns: its code wrote invoices without them')
      await db.query(`INSERT INTO invoices (id, amount_sat, receiver, memo, state, confirmations_required, expires_at_ms, created_at_ms, updated_at_ms, version)
        VALUES ('inv_old', 1000, $1, 'old-memo', 'expired', 1, 10, 1, 10, 1)`, [MERCHANT])
      await db.query('INSERT INTO payment_events (invoice_id, sequence, type, payload, created_at_ms) VALUES ($1, 1, $2, $3, 10)', ['inv_old', 'expired', { previousState: 'pending', invoice: { id: 'inv_old', state: 'expired' } }])
      assert.deepEqual(await runMigrations(db, MIGRATIONS), MIGRATIONS.slice(before.length).map(migration => migration.version))
      const store = new InvoiceStore(db)
      assert.equal((await store.getInvoice('inv_old'))?.grant, null)
      const [event] = await store.listEvents('inv_old')
      assert.deepEqual([event?.invoice.grant, event?.grant], [null, undefined])
    })
  })
}
