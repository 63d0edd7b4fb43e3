/**
 * Two instances on one PostgreSQL server, each with its own connection pool as two processes
 * would have: confirming one invoice at the same moment grants once; renewing one SKU at the same
 * moment counts both renewals.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { openDatabase } from '../../src/db/open-database.js'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { InvoiceStore } from '../../src/payments/invoice-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER, paymentTransaction, txid } from '../payments/chain-transactions.js'

const postgres = await startPostgres({ after })
const ROUNDS = 20
const START = 1_800_000_000_000

interface Instance { invoices: InvoiceStore, grants: EntitlementStore }

async function twoInstances (t: { after (fn: () => unknown): void }): Promise<[Instance, Instance]> {
  const url = await postgres.freshDatabase()
  const [a, b] = await Promise.all([openDatabase({ databaseUrl: url }), openDatabase({ databaseUrl: url })])
  t.after(() => Promise.all([a.close(), b.close()]))
  const now = (): number => START
  return [a, b].map(db => ({ invoices: new InvoiceStore(db, { now }), grants: new EntitlementStore(db, { now }) })) as [Instance, Instance]
}

describe('entitlements on two instances of one server', () => {
  it('grant once when both confirm one invoice at the same moment, every time', async (t) => {
    const [first, second] = await twoInstances(t)
    for (let round = 0; round < ROUNDS; round++) {
      const invoice = await first.invoices.createInvoice({ amountSat: 5000, receiver: MERCHANT, expiresInS: 600, confirmations: 1, grant: { sku: `race-${round}`, to: PAYER, durationS: 60 } })
      const id = txid(9000 + round)
      const observation = { txid: id, transaction: paymentTransaction({ txid: id, amountSat: 5000, memo: invoice.memo, height: 5 }), tipHeight: 5 }
      const results = await Promise.all([first.invoices.recordObservation(invoice.id, observation), second.invoices.recordObservation(invoice.id, observation)])
      const told = results.flatMap(result => result.events).filter(event => event.grant !== undefined)
      assert.equal(told.length, 1, `round ${round}: one confirmed event carries the grant`)
      const grants = (await second.grants.history(PAYER)).filter(grant => grant.sku === `race-${round}`)
      assert.deepEqual(grants.map(grant => [grant.invoiceId, grant.expiresAtMs]), [[invoice.id, START + 60_000]], `round ${round}`)
    }
  })

  it('count both renewals of one SKU made at the same moment', async (t) => {
    const [first, second] = await twoInstances(t)
    for (let round = 0; round < ROUNDS; round++) {
      const sku = `renew-${round}`
      await Promise.all([first, second, first, second].map(instance => instance.grants.grant({ address: PAYER, sku, durationS: 60 })))
      const [held] = (await first.grants.entitlements(PAYER)).filter(each => each.sku === sku)
      assert.equal(held?.expiresAtMs, START + 4 * 60_000, `round ${round}`)
    }
  })
})
