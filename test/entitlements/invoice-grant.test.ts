/**
 * An invoice that grants writes its grant in the transaction that confirms it, exactly once, on
 * both databases: not at `seen`, not again for the same observation offered many times at once,
 * nor for a second payment to the same invoice, nor after a re-org that was followed before the
 * confirmation. The `confirmed` event carries the grant.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { EntitlementStore } from '../../src/entitlements/entitlement-store.js'
import { InvoiceStore, type CreateInvoiceRequest } from '../../src/payments/invoice-store.js'
import { webhookBody } from '../../src/payments/webhook-sender.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER, paymentTransaction, txid } from '../payments/chain-transactions.js'
import { backends, sharedDatabase } from '../payments/databases.js'

const postgres = await startPostgres({ after })
const PRICE = 50_000_000
const START = 1_800_000_000_000
const REQUEST: CreateInvoiceRequest = { amountSat: PRICE, receiver: MERCHANT, expiresInS: 900, confirmations: 3, grant: { sku: 'premium', to: PAYER, durationS: 86_400 } }

let next = 0
/** Txids of their own for each test: the tests of a backend share one database. */
const freshTxid = (): string => txid(5_000_000 + ++next)

for (const backend of backends(postgres)) {
  describe(`an invoice that grants, on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    const setup = () => {
      const clock = { now: START }
      const now = (): number => clock.now
      return { invoices: new InvoiceStore(database(), { now, network: 'regtest' }), grants: new EntitlementStore(database(), { now }), clock }
    }

    it('finds the newest pending invoice that grants the same terms at the same price, open long enough', async () => {
      const { invoices, clock } = setup()
      const terms = { sku: 'open.purchase', to: PAYER, durationS: 86_400 }
      const made = await invoices.createInvoice({ ...REQUEST, grant: terms })
      const openUntil = START + 450_000
      assert.equal((await invoices.findOpenGrantInvoice(terms, PRICE, openUntil))?.id, made.id)
      assert.equal(await invoices.findOpenGrantInvoice({ ...terms, durationS: 3600 }, PRICE, openUntil), undefined, 'another duration')
      assert.equal(await invoices.findOpenGrantInvoice({ sku: 'open.purchase', to: PAYER }, PRICE, openUntil), undefined, 'for good is another term')
      assert.equal(await invoices.findOpenGrantInvoice(terms, PRICE + 1, openUntil), undefined, 'another price')
      assert.equal(await invoices.findOpenGrantInvoice(terms, PRICE, START + 900_001), undefined, 'not open that long')
      clock.now = START + 900_000
      await invoices.expireDue()
      assert.equal(await invoices.findOpenGrantInvoice(terms, PRICE, START), undefined, 'expired: no longer pending')
    })

    it('keeps what it grants with it, and refuses terms out of their rules before writing anything', async () => {
      const { invoices } = setup()
      const invoice = await invoices.createInvoice(REQUEST)
      assert.deepEqual(invoice.grant, { sku: 'premium', to: PAYER, durationS: 86_400 })
      assert.deepEqual((await invoices.getInvoice(invoice.id))?.grant, invoice.grant)
      assert.equal((await invoices.createInvoice({ ...REQUEST, grant: undefined })).grant, null)
      const forGood = await invoices.createInvoice({ ...REQUEST, grant: { sku: 'lifetime', to: PAYER } })
      assert.deepEqual(forGood.grant, { sku: 'lifetime', to: PAYER })
      const bad = [
        { sku: 'Premium', to: PAYER }, { sku: '', to: PAYER }, { sku: 'x'.repeat(65), to: PAYER }, { sku: 'a/b', to: PAYER },
        { sku: 'premium', to: 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82' }, { sku: 'premium', to: '' },
        { sku: 'premium', to: PAYER, durationS: 0 }, { sku: 'premium', to: PAYER, durationS: 1.5 }, { sku: 'premium', to: PAYER, durationS: 315_360_001 },
      ]
      for (const grant of bad) await assert.rejects(invoices.createInvoice({ ...REQUEST, grant }), { code: 'INVOICE_ERR_INVALID', message: /^grant: / }, JSON.stringify(grant))
    })

    it('grants on confirmation only, in the same commit, and tells it on the confirmed event', async () => {
      const { invoices, grants } = setup()
      const invoice = await invoices.createInvoice(REQUEST)
      const id = freshTxid()
      const pay = { txid: id, amountSat: PRICE, memo: invoice.memo, height: 100 }
      const seen = await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction(pay), tipHeight: 100 })
      assert.equal(seen.invoice.state, 'seen')
      assert.equal(await grants.grantOfInvoice(invoice.id), undefined, 'nothing granted at seen')
      const confirmed = await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction(pay), tipHeight: 102 })
      assert.equal(confirmed.invoice.state, 'confirmed')
      const grant = await grants.grantOfInvoice(invoice.id)
      assert.deepEqual([grant?.address, grant?.sku, grant?.invoiceId, grant?.startsAtMs, grant?.expiresAtMs], [PAYER, 'premium', invoice.id, START, START + 86_400_000])
      const [event] = confirmed.events
      assert.deepEqual([event?.type, event?.grant], ['confirmed', grant])
      // As stored, for the outbox's consumers.
      const stored = (await invoices.listEvents(invoice.id)).find(each => each.type === 'confirmed')
      assert.deepEqual(stored?.grant, grant)
      assert.equal((await invoices.listEvents(invoice.id)).find(each => each.type === 'seen')?.grant, undefined)
    })

    it('tells the grant in the confirmed webhook, beside the invoice that says what it grants', async () => {
      const { invoices } = setup()
      const invoice = await invoices.createInvoice({ ...REQUEST, confirmations: 1, grant: { sku: 'webhook-told', to: PAYER, durationS: 86_400 } })
      const id = freshTxid()
      const { events } = await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: PRICE, memo: invoice.memo, height: 60 }), tipHeight: 60 })
      const body = webhookBody(events[0] as (typeof events)[number])
      assert.equal(body.type, 'confirmed')
      assert.deepEqual(body.invoice.grant, { sku: 'webhook-told', to: PAYER, durationS: 86_400 })
      assert.deepEqual(body.grant, { address: PAYER, sku: 'webhook-told', grantedAt: new Date(START).toISOString(), expiresAt: new Date(START + 86_400_000).toISOString(), invoiceId: invoice.id })
      const plain = await invoices.createInvoice({ ...REQUEST, confirmations: 1, grant: undefined })
      const other = freshTxid()
      const settled = await invoices.recordObservation(plain.id, { txid: other, transaction: paymentTransaction({ txid: other, amountSat: PRICE, memo: plain.memo, height: 60 }), tipHeight: 60 })
      const plainBody = webhookBody(settled.events[0] as (typeof events)[number])
      assert.deepEqual(['grant' in plainBody, 'grant' in plainBody.invoice], [false, false], 'an invoice that grants nothing shows no grant')
    })

    it('grants once when the confirming observation comes many times at once', async () => {
      const { invoices, grants } = setup()
      const invoice = await invoices.createInvoice({ ...REQUEST, grant: { sku: 'burst', to: PAYER, durationS: 60 } })
      const id = freshTxid()
      const observation = { txid: id, transaction: paymentTransaction({ txid: id, amountSat: PRICE, memo: invoice.memo, height: 10 }), tipHeight: 12 }
      await Promise.all(Array.from({ length: 8 }, () => invoices.recordObservation(invoice.id, observation)))
      await invoices.recordObservation(invoice.id, observation)
      const history = (await grants.history(PAYER)).filter(grant => grant.invoiceId === invoice.id)
      assert.equal(history.length, 1)
      assert.equal(history[0]?.expiresAtMs, START + 60_000, 'one grant: the end is not extended by a second')
    })

    it('grants once when a second payment in full comes to the same invoice', async () => {
      const { invoices, grants } = setup()
      const invoice = await invoices.createInvoice({ ...REQUEST, grant: { sku: 'twice-paid', to: PAYER, durationS: 60 } })
      const [first, second] = [freshTxid(), freshTxid()]
      await invoices.recordObservation(invoice.id, { txid: first, transaction: paymentTransaction({ txid: first, amountSat: PRICE, memo: invoice.memo, height: 10 }), tipHeight: 12 })
      const again = await invoices.recordObservation(invoice.id, { txid: second, transaction: paymentTransaction({ txid: second, amountSat: PRICE, memo: invoice.memo, height: 11 }), tipHeight: 13 })
      assert.deepEqual([again.invoice.state, again.invoice.overpaidSat, again.events.map(event => event.type)], ['confirmed', PRICE, ['overpaid']])
      assert.equal((await grants.history(PAYER)).filter(grant => grant.sku === 'twice-paid').length, 1)
    })

    it('grants nothing while a re-org takes the payment back before the confirmation, then once when it confirms', async () => {
      const { invoices, grants } = setup()
      const invoice = await invoices.createInvoice({ ...REQUEST, grant: { sku: 'reorged', to: PAYER } })
      const id = freshTxid()
      const pay = { txid: id, amountSat: PRICE, memo: invoice.memo }
      await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ ...pay, height: 20 }), tipHeight: 21 })
      const back = await invoices.recordObservation(invoice.id, { txid: id, transaction: null, tipHeight: 21 })
      assert.equal(back.invoice.state, 'pending')
      assert.equal(await grants.grantOfInvoice(invoice.id), undefined)
      await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ ...pay, height: 22 }), tipHeight: 24 })
      assert.equal((await invoices.getInvoice(invoice.id))?.state, 'confirmed')
      assert.equal((await grants.history(PAYER)).filter(grant => grant.invoiceId === invoice.id).length, 1)
    })

    it('renews from the current end when a second invoice for the same SKU confirms', async () => {
      const { invoices, grants, clock } = setup()
      const terms = { sku: 'renewed', to: PAYER, durationS: 3600 }
      for (const at of [0, 600_000]) {
        clock.now = START + at
        const invoice = await invoices.createInvoice({ ...REQUEST, confirmations: 1, grant: terms })
        const id = freshTxid()
        await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: PRICE, memo: invoice.memo, height: 30 }), tipHeight: 30 })
      }
      const [held] = (await grants.entitlements(PAYER)).filter(each => each.sku === 'renewed')
      assert.equal(held?.expiresAtMs, START + 2 * 3_600_000)
    })

    it('has the database refuse a second grant of one invoice, whatever the code does', async () => {
      const { invoices } = setup()
      const invoice = await invoices.createInvoice({ ...REQUEST, confirmations: 1 })
      const id = freshTxid()
      await invoices.recordObservation(invoice.id, { txid: id, transaction: paymentTransaction({ txid: id, amountSat: PRICE, memo: invoice.memo, height: 40 }), tipHeight: 40 })
      await assert.rejects(database().query(
        'INSERT INTO entitlement_grants (address, sku, invoice_id, granted_at_ms, starts_at_ms) VALUES ($1, $2, $3, 1, 1)', [PAYER, 'premium', invoice.id]
      ), { code: '23505' })
    })
  })
}
