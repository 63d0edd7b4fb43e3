import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { proveInvoicePayment } from 'pocketnet-client'
import type { Database } from '../../src/db/database.js'
import type { InvoiceEvent } from '../../src/payments/invoice.js'
import { InvoiceStore, type CreateInvoiceRequest } from '../../src/payments/invoice-store.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { MERCHANT, PAYER, paymentTransaction, txid } from './chain-transactions.js'
import { backends, sharedDatabase } from './databases.js'

const postgres = await startPostgres({ after })

const PRICE = 150_000_000
const REQUEST: CreateInvoiceRequest = { amountSat: PRICE, receiver: MERCHANT, expiresInS: 900, confirmations: 3, metadata: { order: 'A-17' } }

interface Setup { db: Database, store: InvoiceStore, clock: { now: number } }

const types = (events: InvoiceEvent[]): string[] => events.map(event => event.type)

for (const backend of backends(postgres)) {
  describe(`invoices on the ${backend.name} database`, () => {
    const database = sharedDatabase(backend, { before, after })
    /** A store with a clock of its own on the shared database: each test works on invoices and txids of its own. */
    async function setup (): Promise<Setup> {
      const clock = { now: 1_800_000_000_000 }
      const db = database()
      return { db, store: new InvoiceStore(db, { now: () => clock.now, network: 'regtest' }), clock }
    }

    it('creates a pending invoice with an unguessable id, a unique memo and the amount in satoshi', async () => {
      const { store, clock } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      assert.match(invoice.id, /^inv_[A-Za-z0-9_-]{22}$/)
      assert.match(invoice.memo, /^pk_[A-Za-z0-9_-]{16}$/)
      const { id, memo, ...rest } = invoice
      assert.deepEqual([typeof id, typeof memo], ['string', 'string'])
      assert.deepEqual(rest, {
        amountSat: PRICE,
        receiver: MERCHANT,
        metadata: { order: 'A-17' },
        state: 'pending',
        confirmationsRequired: 3,
        expiresAtMs: clock.now + 900_000,
        createdAtMs: clock.now,
        updatedAtMs: clock.now,
        version: 0,
        txid: null,
        confirmations: 0,
        underpaid: false,
        underpaidSat: 0,
        overpaid: false,
        overpaidSat: 0,
        paidLate: false,
        paidLateSat: 0,
        grant: null,
      })
      const second = await store.createInvoice(REQUEST)
      assert.notEqual(second.id, invoice.id)
      assert.notEqual(second.memo, invoice.memo)
      assert.deepEqual(await store.getInvoice(invoice.id), invoice)
      assert.deepEqual(await store.findInvoiceByMemo(invoice.memo), invoice)
      assert.equal(await store.getInvoice('inv_nope'), undefined)
      assert.equal(await store.findInvoiceByMemo('nope'), undefined)
    })

    it('keeps a memo to one invoice, and builds a memo from the new id when asked', async () => {
      const { store } = await setup()
      await store.createInvoice({ ...REQUEST, memo: 'order-17' })
      await assert.rejects(store.createInvoice({ ...REQUEST, memo: 'order-17' }), { code: 'INVOICE_ERR_MEMO_TAKEN' })
      const built = await store.createInvoice({ ...REQUEST, memo: id => `pay_${id.length}` })
      assert.equal(built.memo, 'pay_26')
      // The next one builds the same memo from its id: taken, tried again with new ids, then refused.
      await assert.rejects(store.createInvoice({ ...REQUEST, memo: id => `pay_${id.length}` }), { code: 'INVOICE_ERR_MEMO_TAKEN' })
    })

    it('refuses requests out of the rules before writing anything', async () => {
      const { db, store } = await setup()
      const bad: Array<Partial<CreateInvoiceRequest>> = [
        { amountSat: 0 }, { amountSat: 1.5 }, { amountSat: 2 ** 25 * 1e8 }, { amountSat: Number('1e300') },
        { receiver: '' }, { receiver: 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82' },
        { expiresInS: 0 }, { expiresInS: 31_536_001 }, { confirmations: 0 }, { confirmations: 1001 }, { confirmations: 2.5 },
        { memo: '' }, { memo: 'x'.repeat(81) }, { memo: 'tab\there' },
        { metadata: [] as unknown as Record<string, unknown> }, { metadata: { blob: 'x'.repeat(9000) } },
      ]
      const count = async (): Promise<unknown> => (await db.query('SELECT count(*)::integer AS n FROM invoices')).rows[0]?.n
      const before = await count()
      for (const change of bad) await assert.rejects(store.createInvoice({ ...REQUEST, ...change }), { code: 'INVOICE_ERR_INVALID' }, JSON.stringify(change).slice(0, 80))
      assert.equal(await count(), before)
    })

    it('goes pending → seen → confirmed as the chain shows the payment and its confirmations', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(1), amountSat: PRICE, memo: invoice.memo }
      const mempool = await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction(pay), tipHeight: 100 })
      assert.deepEqual([mempool.refused, mempool.invoice.state, mempool.events.length, mempool.proof?.pays], [undefined, 'pending', 0, true])
      const seen = await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction({ ...pay, height: 101 }), tipHeight: 101 })
      assert.deepEqual([seen.invoice.state, seen.invoice.txid, seen.invoice.confirmations, types(seen.events)], ['seen', txid(1), 1, ['seen']])
      const deeper = await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction({ ...pay, height: 101 }), tipHeight: 102 })
      assert.deepEqual([deeper.invoice.state, deeper.invoice.confirmations, deeper.events.length], ['seen', 2, 0])
      const confirmed = await store.recordObservation(invoice.id, { txid: txid(1), transaction: paymentTransaction({ ...pay, height: 101 }), tipHeight: 103 })
      assert.deepEqual([confirmed.invoice.state, confirmed.invoice.confirmations, types(confirmed.events)], ['confirmed', 3, ['confirmed']])
      const [event] = confirmed.events as [InvoiceEvent]
      assert.deepEqual([event.invoiceId, event.sequence, event.idempotencyKey, event.previousState, event.invoice.state], [invoice.id, 2, `${invoice.id}:2`, 'seen', 'confirmed'])
      assert.deepEqual(types(await store.listEvents(invoice.id)), ['seen', 'confirmed'])
    })

    it('records with the proof its caller made already, and refuses one made for another invoice or transaction', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const other = await store.createInvoice(REQUEST)
      const transaction = paymentTransaction({ txid: txid(801), amountSat: PRICE, memo: invoice.memo, height: 101 })
      // Made at a deeper tip than the observation says: what is recorded is the proof's, not made again.
      const proof = proveInvoicePayment(transaction, invoice, 103)
      const recorded = await store.recordObservation(invoice.id, { txid: txid(801), transaction, tipHeight: 101, proof })
      assert.deepEqual([recorded.invoice.state, recorded.invoice.confirmations, recorded.proof], ['confirmed', 3, proof])
      const otherTransaction = paymentTransaction({ txid: txid(802), amountSat: PRICE, memo: other.memo, height: 101 })
      for (const wrong of [proveInvoicePayment(otherTransaction, invoice, 101), proveInvoicePayment(otherTransaction, { ...other, amountSat: PRICE + 1 }, 101)]) {
        await assert.rejects(store.recordObservation(other.id, { txid: txid(802), transaction: otherTransaction, tipHeight: 101, proof: wrong }), { code: 'INVOICE_ERR_OBSERVATION' })
      }
      assert.equal((await store.readInvoice(other.id))?.invoice.state, 'pending')
    })

    it('changes nothing when the same observation comes again', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const observation = { txid: txid(2), transaction: paymentTransaction({ txid: txid(2), amountSat: PRICE, memo: invoice.memo, height: 50 }), tipHeight: 50 }
      const first = await store.recordObservation(invoice.id, observation)
      const again = await store.recordObservation(invoice.id, observation)
      assert.deepEqual(types(first.events), ['seen'])
      assert.deepEqual(again.events, [])
      assert.deepEqual(again.invoice, first.invoice)
      assert.equal((await store.listEvents(invoice.id)).length, 1)
    })

    it('settles with one block when one confirmation is required', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice({ ...REQUEST, confirmations: 1 })
      const result = await store.recordObservation(invoice.id, { txid: txid(3), transaction: paymentTransaction({ txid: txid(3), amountSat: PRICE, memo: invoice.memo, height: 7 }), tipHeight: 7 })
      assert.deepEqual([result.invoice.state, types(result.events), result.events[0]?.previousState], ['confirmed', ['confirmed'], 'pending'])
    })

    it('refuses a transaction with another memo, without one, to another address, or unknown to the node', async () => {
      const { db, store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const other = await store.createInvoice(REQUEST)
      const offer = (n: number, shape: Parameters<typeof paymentTransaction>[0]) => store.recordObservation(invoice.id, { txid: txid(n), transaction: paymentTransaction(shape), tipHeight: 10 })
      assert.equal((await offer(4, { txid: txid(4), amountSat: PRICE, memo: other.memo, height: 10 })).refused, 'MEMO_MISMATCH')
      assert.equal((await offer(5, { txid: txid(5), amountSat: PRICE, height: 10 })).refused, 'MEMO_MISMATCH')
      assert.equal((await offer(6, { txid: txid(6), amountSat: PRICE, memo: invoice.memo, receiver: PAYER, height: 10 })).refused, 'NOT_PAID_TO_RECEIVER')
      const unknown = await store.recordObservation(invoice.id, { txid: txid(7), transaction: null, tipHeight: 10 })
      assert.deepEqual([unknown.refused, unknown.proof, unknown.invoice.state], ['UNKNOWN_TRANSACTION', undefined, 'pending'])
      assert.equal((await db.query('SELECT count(*)::integer AS n FROM payments WHERE invoice_id = $1', [invoice.id])).rows[0]?.n, 0)
      assert.deepEqual(await store.listEvents(invoice.id), [])
    })

    it('never counts one transaction for two invoices', async () => {
      const { store } = await setup()
      const first = await store.createInvoice(REQUEST)
      const second = await store.createInvoice(REQUEST)
      await store.recordObservation(first.id, { txid: txid(8), transaction: paymentTransaction({ txid: txid(8), amountSat: PRICE, memo: first.memo, height: 10 }), tipHeight: 10 })
      // A node that lies, answering the same txid with the second invoice's memo.
      const forged = await store.recordObservation(second.id, { txid: txid(8), transaction: paymentTransaction({ txid: txid(8), amountSat: PRICE, memo: second.memo, height: 10 }), tipHeight: 10 })
      assert.deepEqual([forged.refused, forged.invoice.state, forged.events], ['TXID_TAKEN', 'pending', []])
      assert.equal((await store.getInvoice(first.id))?.state, 'seen')
    })

    it('flags an underpayment without settling, then settles with a payment in full', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const short = await store.recordObservation(invoice.id, { txid: txid(9), transaction: paymentTransaction({ txid: txid(9), amountSat: 50_000_000, memo: invoice.memo, height: 10 }), tipHeight: 20 })
      assert.deepEqual([short.invoice.state, short.invoice.underpaid, short.invoice.underpaidSat, types(short.events), short.proof?.shortSat], ['pending', true, 50_000_000, ['underpaid'], 100_000_000])
      const full = await store.recordObservation(invoice.id, { txid: txid(10), transaction: paymentTransaction({ txid: txid(10), amountSat: PRICE, memo: invoice.memo, height: 20 }), tipHeight: 22 })
      assert.deepEqual([full.invoice.state, full.invoice.txid, full.invoice.underpaidSat, types(full.events)], ['confirmed', txid(10), 50_000_000, ['confirmed']])
    })

    it('settles with an overpayment, flagging the excess', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const result = await store.recordObservation(invoice.id, { txid: txid(11), transaction: paymentTransaction({ txid: txid(11), amountSat: 200_000_000, memo: invoice.memo, height: 10 }), tipHeight: 10 })
      assert.deepEqual([result.invoice.state, result.invoice.overpaid, result.invoice.overpaidSat, types(result.events)], ['seen', true, 50_000_000, ['seen', 'overpaid']])
      assert.deepEqual(result.events.map(event => event.sequence), [1, 2])
    })

    it('counts 0.1 + 0.2 PKOIN in two outputs as 0.3 exactly', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice({ ...REQUEST, amountSat: 30_000_000, confirmations: 1 })
      const transaction = paymentTransaction({ txid: txid(12), amountSat: 10_000_000, memo: invoice.memo, height: 10 })
      transaction.outputs.push({ n: 3, addresses: [MERCHANT], satoshi: 20_000_000, scriptHex: '76a9' })
      const result = await store.recordObservation(invoice.id, { txid: txid(12), transaction, tipHeight: 10 })
      assert.deepEqual([result.proof?.outcome, result.invoice.state, result.invoice.overpaidSat], ['exact', 'confirmed', 0])
    })

    it('expires an unpaid invoice at its expiry, and records a later payment as paid late, never confirmed', async () => {
      const { store, clock } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const mine = (events: InvoiceEvent[]): InvoiceEvent[] => events.filter(event => event.invoiceId === invoice.id)
      clock.now = invoice.expiresAtMs - 1
      assert.deepEqual(mine(await store.expireDue()), [])
      clock.now = invoice.expiresAtMs
      const expired = mine(await store.expireDue())
      assert.deepEqual(expired.map(event => [event.invoiceId, event.type, event.previousState]), [[invoice.id, 'expired', 'pending']])
      assert.deepEqual(mine(await store.expireDue()), [])
      clock.now += 60_000
      const late = await store.recordObservation(invoice.id, { txid: txid(13), transaction: paymentTransaction({ txid: txid(13), amountSat: PRICE, memo: invoice.memo, height: 30 }), tipHeight: 40 })
      assert.deepEqual([late.invoice.state, late.invoice.paidLate, late.invoice.paidLateSat, late.invoice.txid, types(late.events)], ['expired', true, PRICE, null, ['paidLate']])
    })

    it('expires a pending invoice when it is read after its expiry, with its event', async () => {
      const { store, clock } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      clock.now = invoice.expiresAtMs + 1
      assert.equal((await store.getInvoice(invoice.id))?.state, 'expired')
      assert.deepEqual(types(await store.listEvents(invoice.id)), ['expired'])
      assert.deepEqual((await store.expireDue()).filter(event => event.invoiceId === invoice.id), [])
    })

    it('keeps waiting for a payment seen in the mempool before expiry, and settles when it is mined late', async () => {
      const { store, clock } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(14), amountSat: PRICE, memo: invoice.memo }
      await store.recordObservation(invoice.id, { txid: txid(14), transaction: paymentTransaction(pay), tipHeight: 10 })
      clock.now = invoice.expiresAtMs + 600_000
      assert.deepEqual((await store.expireDue()).filter(event => event.invoiceId === invoice.id), [])
      const mined = await store.recordObservation(invoice.id, { txid: txid(14), transaction: paymentTransaction({ ...pay, height: 11 }), tipHeight: 11 })
      assert.deepEqual([mined.invoice.state, mined.invoice.paidLate], ['seen', false])
    })

    it('moves a seen invoice back to pending when a re-org takes its block (the payment dropped), and on when a block holds it again', async () => {
      const { store, db } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(15), amountSat: PRICE, memo: invoice.memo }
      await store.recordObservation(invoice.id, { txid: txid(15), transaction: paymentTransaction({ ...pay, height: 200 }), tipHeight: 201 })
      const reorged = await store.recordObservation(invoice.id, { txid: txid(15), transaction: paymentTransaction(pay), tipHeight: 199 })
      assert.deepEqual([reorged.invoice.state, reorged.invoice.txid, reorged.invoice.confirmations, types(reorged.events), reorged.events[0]?.previousState], ['pending', null, 0, ['pending'], 'seen'])
      const open = async (): Promise<unknown[]> => (await store.listOpenPayments()).filter(payment => payment.invoiceId === invoice.id).map(payment => [payment.txid, payment.state, payment.height])
      // Answered without a block after it had one: dropped (a 0.22.7 node does not put it back in
      // its mempool), so not holding the invoice past its expiry, but still read each block while
      // the invoice is open: its block may come back.
      assert.deepEqual(await open(), [[txid(15), 'dropped', null]])
      const again = await store.recordObservation(invoice.id, { txid: txid(15), transaction: paymentTransaction(pay), tipHeight: 200 })
      assert.deepEqual([again.invoice.state, again.events], ['pending', []])
      const { rows } = await db.query('SELECT state FROM payments WHERE txid = $1', [txid(15)])
      assert.deepEqual(rows, [{ state: 'dropped' }])
      const remined = await store.recordObservation(invoice.id, { txid: txid(15), transaction: paymentTransaction({ ...pay, height: 201 }), tipHeight: 203 })
      assert.deepEqual([remined.invoice.state, remined.invoice.confirmations, types(remined.events)], ['confirmed', 3, ['confirmed']])
      assert.deepEqual(types(await store.listEvents(invoice.id)), ['seen', 'pending', 'confirmed'])
      assert.deepEqual(await open(), [])
    })

    it('drops a payment the node no longer knows, and takes it back when it returns', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const pay = { txid: txid(16), amountSat: PRICE, memo: invoice.memo, height: 300 }
      await store.recordObservation(invoice.id, { txid: txid(16), transaction: paymentTransaction(pay), tipHeight: 300 })
      const gone = await store.recordObservation(invoice.id, { txid: txid(16), transaction: null, tipHeight: 300 })
      assert.deepEqual([gone.refused, gone.invoice.state, types(gone.events)], [undefined, 'pending', ['pending']])
      assert.deepEqual((await store.listOpenPayments()).filter(payment => payment.invoiceId === invoice.id).map(payment => payment.state), ['dropped'])
      const back = await store.recordObservation(invoice.id, { txid: txid(16), transaction: paymentTransaction(pay), tipHeight: 300 })
      assert.deepEqual([back.invoice.state, types(back.events)], ['seen', ['seen']])
    })

    it('stays confirmed: later payments only add to what is flagged', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice({ ...REQUEST, confirmations: 1 })
      await store.recordObservation(invoice.id, { txid: txid(17), transaction: paymentTransaction({ txid: txid(17), amountSat: PRICE, memo: invoice.memo, height: 5 }), tipHeight: 5 })
      const twice = await store.recordObservation(invoice.id, { txid: txid(18), transaction: paymentTransaction({ txid: txid(18), amountSat: PRICE, memo: invoice.memo, height: 6 }), tipHeight: 6 })
      assert.deepEqual([twice.invoice.state, twice.invoice.txid, twice.invoice.overpaidSat, types(twice.events)], ['confirmed', txid(17), PRICE, ['overpaid']])
      const reorged = await store.recordObservation(invoice.id, { txid: txid(17), transaction: null, tipHeight: 6 })
      assert.deepEqual([reorged.invoice.state, reorged.invoice.txid], ['confirmed', txid(17)])
    })

    it('lists what the watcher needs: open payments and the receivers of open invoices', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      await store.createInvoice({ ...REQUEST, receiver: PAYER })
      await store.recordObservation(invoice.id, { txid: txid(19), transaction: paymentTransaction({ txid: txid(19), amountSat: PRICE, memo: invoice.memo, height: 9 }), tipHeight: 9 })
      assert.deepEqual((await store.listOpenPayments()).filter(payment => payment.invoiceId === invoice.id), [{ txid: txid(19), invoiceId: invoice.id, state: 'in_block', height: 9, blockHash: (9).toString(16).padStart(64, 'b') }])
      const receivers = await store.listOpenReceivers()
      assert.ok(receivers.includes(PAYER) && receivers.includes(MERCHANT), receivers.join(', '))
      assert.deepEqual(receivers, [...receivers].sort())
    })

    it('refuses an observation of an unknown invoice, a malformed txid, or a transaction of another txid', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const transaction = paymentTransaction({ txid: txid(20), amountSat: PRICE, memo: invoice.memo })
      await assert.rejects(store.recordObservation('inv_nope', { txid: txid(20), transaction, tipHeight: 1 }), { code: 'INVOICE_ERR_NOT_FOUND' })
      await assert.rejects(store.recordObservation(invoice.id, { txid: 'ABC', transaction, tipHeight: 1 }), { code: 'INVOICE_ERR_OBSERVATION' })
      await assert.rejects(store.recordObservation(invoice.id, { txid: txid(21), transaction, tipHeight: 1 }), { code: 'INVOICE_ERR_OBSERVATION' })
      await assert.rejects(store.recordObservation(invoice.id, { txid: txid(20), transaction, tipHeight: -1 }), { code: 'INVOICE_ERR_OBSERVATION' })
    })

    it('settles one transaction offered for one invoice many times at once exactly once', async () => {
      const { store } = await setup()
      const invoice = await store.createInvoice(REQUEST)
      const observation = { txid: txid(22), transaction: paymentTransaction({ txid: txid(22), amountSat: PRICE, memo: invoice.memo, height: 10 }), tipHeight: 12 }
      const results = await Promise.all(Array.from({ length: 8 }, () => store.recordObservation(invoice.id, observation)))
      assert.deepEqual(results.flatMap(result => types(result.events)), ['confirmed'])
      assert.deepEqual(types(await store.listEvents(invoice.id)), ['confirmed'])
    })
  })
}
