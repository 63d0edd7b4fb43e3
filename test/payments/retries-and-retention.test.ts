/**
 * What the payments keep trying and what they let go (issue #39, findings 4 and 6): an app
 * handler that throws is offered its event again when its retry falls due, with no other
 * transition to wake it; unpaid invoices expired past the retention period are deleted with
 * their events and outbox rows, paid ones kept; an invoice made without `expiryWebhook` expires
 * without a webhook row. On both databases, on a clock the test moves.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, describe, it } from 'node:test'
import { createPaymentStore, type PaymentStore } from '../../src/payments/create-payment-store.js'
import type { InvoiceEvent } from '../../src/payments/invoice.js'
import { PaymentsService } from '../../src/payments/payments-service.js'
import { manualClock, type ManualClock } from '../helpers/manual-clock.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, paymentTransaction } from './chain-transactions.js'
import { freshDataDir } from './databases.js'

const postgres = await startPostgres({ after })
const EPOCH_MS = 1_800_000_000_000
const DAY_MS = 86_400_000

type WithAfter = { after (fn: () => unknown): void }

const backends = [
  {
    name: 'embedded',
    async open (t: WithAfter, now: () => number, consumers: string[]): Promise<PaymentStore> {
      const dataDir = await freshDataDir()
      const store = await createPaymentStore({ dataDir, now, consumers, expiryOptional: ['webhook'] })
      t.after(async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }) })
      return store
    },
  },
  {
    name: 'server',
    async open (t: WithAfter, now: () => number, consumers: string[]): Promise<PaymentStore> {
      const store = await createPaymentStore({ databaseUrl: await postgres.freshDatabase(), now, consumers, expiryOptional: ['webhook'] })
      t.after(() => store.close())
      return store
    },
  },
]

function serviceOn (store: PaymentStore, clock: ManualClock, warnings: string[] = []): PaymentsService {
  const payments = new PaymentsService(store, () => Promise.reject(new Error('no node in this test')), { receiver: MERCHANT, confirmations: 1, invoiceTtlS: 60 }, () => {}, undefined, {
    now: () => EPOCH_MS + clock.now(),
    timers: clock.timers,
    random: () => 0.5,
    log: { warn: (_fields, message) => { warnings.push(message) } },
    retentionMs: 7 * DAY_MS,
  })
  return payments
}

/** Lets the service's database work run between moves of the clock. */
async function settle (payments: PaymentsService): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await payments.deliver()
    await new Promise(resolve => setImmediate(resolve))
  }
}

for (const backend of backends) {
  describe(`payments retries and retention (${backend.name})`, () => {
    it('offers an event again to a handler that threw once its retry falls due, with nothing else happening', async (t) => {
      const clock = manualClock()
      const store = await backend.open(t, () => EPOCH_MS + clock.now(), ['app'])
      const warnings: string[] = []
      const payments = serviceOn(store, clock, warnings)
      t.after(() => payments.close())
      const calls: InvoiceEvent[] = []
      // A handler removed before any event is never called; the others run in the order added.
      const removed: InvoiceEvent[] = []
      const removedHandler = (event: InvoiceEvent): void => { removed.push(event) }
      payments.on('expired', removedHandler)
      payments.on('expired', (event: InvoiceEvent) => {
        calls.push(event)
        if (calls.length === 1) throw new Error('the app\'s database was away')
      })
      payments.off('expired', removedHandler)
      const invoice = await payments.createInvoice({ amount: 5000, expiresInS: 1 })
      clock.advance(1000)
      await payments.onBlock()
      await settle(payments)
      assert.equal(calls.length, 1, 'tried once')
      assert.deepEqual(warnings, ['Payments: an app handler threw; the event is offered again later'])
      assert.equal(await store.outbox.countUndelivered('app'), 1)
      // The retry's time (about a second, at the middle of its jitter) passes: no block, no other invoice.
      clock.advance(999)
      await settle(payments)
      clock.advance(1000)
      await settle(payments)
      await payments.deliver()
      assert.equal(calls.length, 2, 'offered again')
      assert.deepEqual(calls.map(event => event.idempotencyKey), [`${invoice.id}:1`, `${invoice.id}:1`])
      assert.equal(await store.outbox.countUndelivered('app'), 0, 'delivered the second time')
      assert.deepEqual(removed, [], 'the handler removed was never called')
    })

    it('deletes unpaid invoices expired past the retention period with their events, keeps paid ones, and expires quiet invoices without a webhook', async (t) => {
      const clock = manualClock()
      const store = await backend.open(t, () => EPOCH_MS + clock.now(), ['app', 'webhook'])
      const payments = serviceOn(store, clock)
      t.after(() => payments.close())
      const told = await payments.createInvoice({ amount: 5000, expiresInS: 60 })
      const quiet = await payments.createInvoice({ amount: 5000, expiresInS: 60, expiryWebhook: false })
      const paidLate = await payments.createInvoice({ amount: 5000, expiresInS: 60 })
      clock.advance(60_000)
      await payments.onBlock()
      const outboxOf = async (id: string) => (await store.db.query<{ consumer: string }>('SELECT o.consumer FROM outbox o JOIN outbox_events e ON e.id = o.event_id WHERE e.invoice_id = $1 ORDER BY o.consumer', [id])).rows.map(row => row.consumer)
      assert.deepEqual(await outboxOf(told.id), ['app', 'webhook'])
      assert.deepEqual(await outboxOf(quiet.id), ['app'], 'no webhook for a quiet expiry')
      // Paid after it expired: a record of money, kept.
      const payment = paymentTransaction({ txid: 'e'.repeat(64), amountSat: 5000, memo: paidLate.memo, height: 90 })
      await store.invoices.recordObservation(paidLate.id, { txid: payment.txid, transaction: payment, tipHeight: 100 })

      clock.advance(7 * DAY_MS - 1)
      await payments.onBlock()
      assert.ok(await store.invoices.getInvoice(told.id) !== undefined, 'kept until the retention period has passed')
      clock.advance(1)
      await payments.onBlock()
      assert.equal(await store.invoices.getInvoice(told.id), undefined)
      assert.equal(await store.invoices.getInvoice(quiet.id), undefined)
      assert.deepEqual(await outboxOf(told.id), [])
      assert.deepEqual(await store.invoices.listEvents(told.id), [])
      assert.equal((await store.invoices.getInvoice(paidLate.id))?.paidLate, true, 'a paid invoice is kept')
    })
  })
}
