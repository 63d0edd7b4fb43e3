import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { PaymentOutbox } from '../../src/payments/payment-outbox.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, paymentTransaction, txid } from './chain-transactions.js'
import { backends, sharedDatabase } from './databases.js'

const postgres = await startPostgres({ after })
const REQUEST = { amountSat: 1000, receiver: MERCHANT, expiresInS: 60, confirmations: 2 }

for (const backend of backends(postgres)) {
  describe(`the outbox on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    let consumers = 0

    /** A store and an outbox for a consumer of this test's own, on one clock. */
    function setup () {
      const consumer = `consumer-${++consumers}`
      const clock = { now: 1_800_000_000_000 }
      const options = { clock: () => clock.now, consumers: [consumer, `${consumer}-webhook`] }
      return { consumer, clock, store: new InvoiceStore(database(), options), outbox: new PaymentOutbox(database(), options) }
    }

    it('hands each consumer every event once claimed, in order, until acknowledged', async () => {
      const { consumer, store, outbox } = setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(1), amountSat: 1000, memo: invoice.memo, height: 10 }
      await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 10 })
      await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 11 })
      const claimed = await outbox.claim(consumer)
      assert.deepEqual(claimed.map(event => [event.type, event.sequence, event.idempotencyKey, event.attempts]), [['seen', 1, `${invoice.id}:1`, 1], ['confirmed', 2, `${invoice.id}:2`, 1]])
      assert.equal(claimed[1]?.invoice.state, 'confirmed')
      assert.deepEqual(await outbox.claim(consumer), [], 'leased: not handed out twice')
      assert.equal(await outbox.ack(consumer, claimed[0]?.id as number), true)
      assert.equal(await outbox.ack(consumer, claimed[0]?.id as number), false)
      assert.equal(await outbox.countUndelivered(consumer), 1)
      // The other consumer has its own rows.
      assert.deepEqual((await outbox.claim(`${consumer}-webhook`)).map(event => event.type), ['seen', 'confirmed'])
    })

    it('hands an unacknowledged event out again once its lease lapses: at least once across a crash', async () => {
      const { consumer, clock, store, outbox } = setup()
      const invoice = await store.createInvoice(REQUEST)
      clock.now = invoice.expiresAtMs
      await store.expireDue()
      const [first] = await outbox.claim(consumer, { leaseMs: 5000 })
      assert.equal(first?.type, 'expired')
      clock.now += 4999
      assert.deepEqual(await outbox.claim(consumer, { leaseMs: 5000 }), [])
      clock.now += 1
      const [again] = await outbox.claim(consumer, { leaseMs: 5000 })
      assert.deepEqual([again?.id, again?.idempotencyKey, again?.attempts], [first?.id, first?.idempotencyKey, 2])
      assert.equal(await outbox.ack(consumer, first?.id as number), true)
      clock.now += 10_000
      assert.deepEqual(await outbox.claim(consumer), [])
    })

    it('puts an event back for later, with the delay asked', async () => {
      const { consumer, clock, store, outbox } = setup()
      const invoice = await store.createInvoice(REQUEST)
      clock.now = invoice.expiresAtMs
      await store.getInvoice(invoice.id)
      const [event] = await outbox.claim(consumer)
      await outbox.retryLater(consumer, event?.id as number, 60_000)
      clock.now += 59_999
      assert.deepEqual(await outbox.claim(consumer), [])
      clock.now += 1
      assert.deepEqual((await outbox.claim(consumer)).map(claimed => claimed.attempts), [2])
    })

    it('never hands one event to two claimers at once, and limits a claim', async () => {
      const { consumer, clock, store, outbox } = setup()
      for (let i = 0; i < 6; i++) await store.createInvoice(REQUEST)
      clock.now += 60_000
      assert.equal((await store.expireDue()).length >= 6, true)
      const claims = await Promise.all([outbox.claim(consumer, { limit: 2 }), outbox.claim(consumer, { limit: 2 }), outbox.claim(consumer, { limit: 100 })])
      const ids = claims.flat().map(event => event.id)
      assert.equal(new Set(ids).size, ids.length)
      assert.ok(claims[0].length <= 2 && claims[1].length <= 2)
      assert.equal(await outbox.countUndelivered(consumer), ids.length)
    })
  })
}
