/**
 * Two instances of the service on one PostgreSQL server: each its own connection pool, as two
 * processes would have, racing for the same transactions.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { openDatabase } from '../../src/db/open-database.js'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, paymentTransaction, txid } from './chain-transactions.js'

const postgres = await startPostgres({ after })
const REQUEST = { amountSat: 5000, receiver: MERCHANT, expiresInS: 600, confirmations: 1 }
const ROUNDS = 25

/** Two stores on one database, on one clock the test moves. */
async function twoInstances (t: { after (fn: () => unknown): void }, clock = { now: 1_800_000_000_000 }): Promise<[InvoiceStore, InvoiceStore]> {
  const url = await postgres.freshDatabase()
  // Both migrate at start, as two instances starting together do.
  const [a, b] = await Promise.all([openDatabase({ databaseUrl: url }), openDatabase({ databaseUrl: url })])
  t.after(() => Promise.all([a.close(), b.close()]))
  return [new InvoiceStore(a, { now: () => clock.now }), new InvoiceStore(b, { now: () => clock.now })]
}

describe('two instances on one server', () => {
  it('settle one txid offered for two invoices at the same moment exactly once, every time', async (t) => {
    const [first, second] = await twoInstances(t)
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = await Promise.all([first.createInvoice(REQUEST), second.createInvoice(REQUEST)])
      const id = txid(1000 + round)
      // The same txid with each invoice's memo: what a lying node, or a bug, would offer.
      const [forA, forB] = await Promise.all([
        first.recordObservation(a.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 5000, memo: a.memo, height: 5 }), tipHeight: 5 }),
        second.recordObservation(b.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 5000, memo: b.memo, height: 5 }), tipHeight: 5 }),
      ])
      const outcomes = [forA, forB].map(result => result.refused ?? result.invoice.state).sort()
      assert.deepEqual(outcomes, ['TXID_TAKEN', 'confirmed'], `round ${round}`)
      const confirmed = (await Promise.all([first.listEvents(a.id), first.listEvents(b.id)])).flat().filter(event => event.type === 'confirmed')
      assert.equal(confirmed.length, 1, `round ${round}`)
    }
  })

  it('confirm one invoice once when both see its payment at the same moment', async (t) => {
    const [first, second] = await twoInstances(t)
    for (let round = 0; round < ROUNDS; round++) {
      const invoice = await first.createInvoice(REQUEST)
      const id = txid(2000 + round)
      const observation = { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 5000, memo: invoice.memo, height: 5 }), tipHeight: 5 }
      const results = await Promise.all([first.recordObservation(invoice.id, observation), second.recordObservation(invoice.id, observation)])
      assert.deepEqual(results.flatMap(result => result.events.map(event => event.type)), ['confirmed'], `round ${round}`)
      assert.deepEqual((await second.listEvents(invoice.id)).map(event => event.type), ['confirmed'])
    }
  })

  it('expire each invoice once when both sweep at the same moment', async (t) => {
    const clock = { now: 1_800_000_000_000 }
    const [first, second] = await twoInstances(t, clock)
    const invoices = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? first : second).createInvoice({ ...REQUEST, expiresInS: 60 })))
    clock.now += 60_000
    const swept = (await Promise.all([first.expireDue(7), second.expireDue(7), first.expireDue(), second.expireDue()])).flat()
    assert.deepEqual(swept.map(event => event.invoiceId).sort(), invoices.map(invoice => invoice.id).sort())
    assert.ok(swept.every(event => event.type === 'expired'))
  })
})
