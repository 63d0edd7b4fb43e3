import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { isInvoiceEvent, PaymentOutbox } from '../../src/payments/payment-outbox.js'
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
      const options = { now: () => clock.now, consumers: [consumer, `${consumer}-webhook`] }
      return { consumer, clock, store: new InvoiceStore(database(), options), outbox: new PaymentOutbox(database(), { now: options.now }) }
    }

    /** The row of `eventId` for `consumer`, as stored. */
    async function rowOf (consumer: string, eventId: number | undefined) {
      const { rows } = await database().query<{ status: string, available_at_ms: number, attempts: number, delivered_at_ms: number | null }>(
        'SELECT status, available_at_ms, attempts, delivered_at_ms FROM outbox WHERE consumer = $1 AND event_id = $2', [consumer, eventId])
      return rows[0]
    }

    /** One `expired` event of a new invoice, for this test's consumers only. */
    async function expiredEvent ({ clock, store }: ReturnType<typeof setup>): Promise<void> {
      const invoice = await store.createInvoice(REQUEST)
      clock.now = Math.max(clock.now, invoice.expiresAtMs)
      // Read past its expiry, the invoice expires: its event, and no other invoice's.
      await store.getInvoice(invoice.id)
    }

    it('hands each consumer every event once claimed, in order, until acknowledged', async () => {
      const { consumer, store, outbox } = setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(1), amountSat: 1000, memo: invoice.memo, height: 10 }
      await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 10 })
      await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 11 })
      const claimed = await outbox.claim(consumer)
      assert.deepEqual(claimed.map(event => [event.type, isInvoiceEvent(event) ? event.sequence : undefined, event.idempotencyKey, event.attempts]), [['seen', 1, `${invoice.id}:1`, 1], ['confirmed', 2, `${invoice.id}:2`, 1]])
      assert.ok(claimed[1] !== undefined && isInvoiceEvent(claimed[1]))
      assert.equal(claimed[1].invoice.state, 'confirmed')
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

    it('keeps a claimed event pending, due when its lease lapses, and marks it delivered on ack', async () => {
      const test = setup()
      const { consumer, clock, outbox } = test
      await expiredEvent(test)
      assert.equal(await outbox.nextDueAt(consumer), 0, 'written due at once')
      const [event] = await outbox.claim(consumer, { leaseMs: 5000 })
      assert.deepEqual(await rowOf(consumer, event?.id), { status: 'pending', available_at_ms: clock.now + 5000, attempts: 1, delivered_at_ms: null })
      assert.equal(await outbox.nextDueAt(consumer), clock.now + 5000, 'due again when the lease lapses')
      assert.deepEqual(await outbox.backlog(consumer), { pending: 1, givenUp: 0 })
      clock.now += 1234
      assert.equal(await outbox.ack(consumer, event?.id as number), true)
      assert.deepEqual(await rowOf(consumer, event?.id), { status: 'delivered', available_at_ms: clock.now - 1234 + 5000, attempts: 1, delivered_at_ms: clock.now })
      assert.equal(await outbox.nextDueAt(consumer), undefined, 'nothing pending')
      assert.deepEqual(await outbox.backlog(consumer), { pending: 0, givenUp: 0 })
      clock.now += 60_000
      await outbox.retryLater(consumer, event?.id as number, 0)
      assert.deepEqual(await outbox.claim(consumer), [], 'a delivered event is never put back')
      assert.equal((await rowOf(consumer, event?.id))?.status, 'delivered')
    })

    it('gives an event up: never due, never handed out, counted apart, and delivered all the same if a late attempt takes it', async () => {
      const test = setup()
      const { consumer, clock, outbox } = test
      await expiredEvent(test)
      await expiredEvent(test)
      const [event, other] = await outbox.claim(consumer, { leaseMs: 5000 })
      await outbox.giveUp(consumer, event?.id as number)
      await outbox.retryLater(consumer, other?.id as number, 60_000)
      assert.deepEqual(await rowOf(consumer, event?.id), { status: 'given_up', available_at_ms: clock.now + 5000, attempts: 1, delivered_at_ms: null })
      assert.deepEqual(await outbox.backlog(consumer), { pending: 1, givenUp: 1 })
      assert.equal(await outbox.countUndelivered(consumer), 2)
      assert.equal(await outbox.nextDueAt(consumer), clock.now + 60_000, 'the given-up event is never due')
      await outbox.retryLater(consumer, event?.id as number, 0)
      clock.now += 365 * 86_400_000
      assert.deepEqual((await outbox.claim(consumer)).map(claimed => claimed.id), [other?.id], 'not handed out however late, nor put back by retryLater')
      assert.equal((await rowOf(consumer, event?.id))?.status, 'given_up')
      // Another instance's attempt, claimed before, took it after all.
      assert.equal(await outbox.ack(consumer, event?.id as number), true)
      assert.deepEqual(await rowOf(consumer, event?.id), { status: 'delivered', available_at_ms: clock.now - 365 * 86_400_000 + 5000, attempts: 1, delivered_at_ms: clock.now })
      assert.deepEqual(await outbox.backlog(consumer), { pending: 1, givenUp: 0 })
    })

    it('refuses a status that is not one, and a delivered row without its time', async () => {
      const test = setup()
      const { consumer, outbox } = test
      await expiredEvent(test)
      const [event] = await outbox.claim(consumer)
      await assert.rejects(database().query("UPDATE outbox SET status = 'claimed' WHERE consumer = $1", [consumer]), { code: '23514' })
      await assert.rejects(database().query("UPDATE outbox SET status = 'delivered' WHERE consumer = $1", [consumer]), { code: '23514' })
      await assert.rejects(database().query('UPDATE outbox SET delivered_at_ms = 1 WHERE consumer = $1', [consumer]), { code: '23514' })
      assert.equal((await rowOf(consumer, event?.id))?.status, 'pending')
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
