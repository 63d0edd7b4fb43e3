/**
 * PKOIN payments through the service (issue #26), on the emulator's chain: a tip invoice, paid
 * with its memo in a block, found by the watcher without the front-end reporting it, confirmed
 * after the required blocks, the app's handler run once, the stream told; a txid the client
 * reports for the wrong invoice or one no node knows is refused; a re-org moves it back.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import type { InvoiceEvent } from '../../src/payments/invoice.js'
import { openStream } from '../events/sse-client.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from './databases.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000

async function service (t: WithAfter) {
  const node = await startEmulator(t)
  const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [node.url],
    env: { EVENTS_INGEST: 'true', PAYMENT_ADDRESS: receiver, PAYMENT_TIPS: 'true', PAYMENT_CONFIRMATIONS: '2', DATA_DIR: dataDir },
  })
  await waitFor('the watcher to ingest the chain', () => {
    const reported = app.app.events.since(`${app.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.length > 0
  })
  return { node, app, payer, receiver }
}

const post = async (app: TestApp, path: string, body: unknown) => {
  const response = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as any }
}

const memoHex = (memo: string): string => Buffer.from(memo, 'utf8').toString('hex')

describe('payments through the service', () => {
  it('settles a tip from the chain alone: seen in its block, confirmed after the required ones, the handler run once', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const handled: InvoiceEvent[] = []
    app.app.payments?.on('confirmed', (event: InvoiceEvent) => { handled.push(event) })
    const created = await post(app, '/api/payments/tips', { amount: 150_000_000 })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const invoice = created.body.data
    assert.deepEqual([invoice.state, invoice.amount, invoice.receiver], ['pending', 150_000_000, receiver])
    assert.deepEqual(invoice.hostRequest, { recievers: [{ address: receiver, amount: 1.5 }], feemode: 'exclude', message: invoice.memo })
    const stream = await openStream(t, `${app.url}/api/events?topics=payment:${invoice.id}`)

    // Paid as sdk.payment pays: the amount to the receiver, the memo, the change back.
    node.addTransaction({ inputs: [{ address: payer, amount: 10 * PKOIN }], outputs: [{ address: receiver, amount: 150_000_000 }, { memo: memoHex(invoice.memo), amount: 0 }, { address: payer, amount: 849_990_000 }] })
    node.mineBlock()
    await stream.until('seen', frames => frames.some(frame => frame.data.type === 'seen'))
    assert.equal((await app.get(`/api/payments/invoices/${invoice.id}`)).body.data.state, 'seen')
    node.mineBlock()
    await stream.until('confirmed', frames => frames.some(frame => frame.data.type === 'confirmed'))
    const confirmed = (await app.get(`/api/payments/invoices/${invoice.id}`)).body.data
    assert.deepEqual([confirmed.state, confirmed.confirmations, confirmed.underpaid, confirmed.overpaid], ['confirmed', 2, false, false])
    await waitFor('the app\'s handler', () => handled.length === 1)
    assert.equal(handled[0]?.invoiceId, invoice.id)
    node.mineBlock()
    await waitFor('the next block reported', () => {
      const blocks = app.app.events.since(`${app.app.events.lastId.split('-')[0] as string}-0`, new Set(['blocks']))
      return blocks !== 'gap' && blocks.some(event => event.data.height === node.height)
    })
    await app.app.payments?.deliver()
    assert.equal(handled.length, 1, 'confirmed once')
    assert.equal((await app.get(`/api/payments/invoices/${invoice.id}`)).body.data.state, 'confirmed')
  })

  it('checks what the front-end reports on chain: a txid for another invoice, one no node knows, a payment short of the price', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const first = (await post(app, '/api/payments/tips', { amount: 1 * PKOIN })).body.data
    const second = (await post(app, '/api/payments/tips', { amount: 1 * PKOIN })).body.data
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: memoHex(first.memo), amount: 0 }] })
    node.mineBlock()
    const reported = await post(app, `/api/payments/invoices/${first.id}/transaction`, { txid: paid.txid })
    assert.equal(reported.body.data.invoice.state, 'seen')
    // The client says the same transaction paid the second invoice: its memo says otherwise.
    const other = await post(app, `/api/payments/invoices/${second.id}/transaction`, { txid: paid.txid })
    assert.deepEqual([other.body.data.invoice.state, other.body.data.refused], ['pending', 'MEMO_MISMATCH'])
    // "Paid", with a txid no node has.
    const made = await post(app, `/api/payments/invoices/${second.id}/transaction`, { txid: 'ab'.repeat(32) })
    assert.deepEqual([made.status, made.body.data.invoice.state, made.body.data.refused], [200, 'pending', 'UNKNOWN_TRANSACTION'])
    // 0.1 + 0.2 PKOIN with its memo: short of 1 PKOIN, recorded and flagged, not settled.
    const short = node.addTransaction({ inputs: [{ address: payer, amount: PKOIN }], outputs: [{ address: receiver, amount: 10_000_000 }, { address: receiver, amount: 20_000_000 }, { memo: memoHex(second.memo), amount: 0 }] })
    node.mineBlock()
    const underpaid = (await post(app, `/api/payments/invoices/${second.id}/transaction`, { txid: short.txid })).body.data.invoice
    assert.deepEqual([underpaid.state, underpaid.underpaid, underpaid.underpaidAmount], ['pending', true, 30_000_000])
    assert.equal((await app.get('/api/payments/invoices/inv_AAAAAAAAAAAAAAAAAAAAAA')).status, 404)
    assert.equal((await post(app, '/api/payments/tips', { amount: 1 })).status, 400)
  })

  it('offers the host\'s checkout, whose memo is the invoice\'s, and takes its callback as a hint checked on chain', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const invoice = (await post(app, '/api/payments/tips', { amount: 2 * PKOIN, checkout: true })).body.data
    const checkout = invoice.hostCheckout
    assert.deepEqual([checkout.address, checkout.value, checkout.payload], [receiver, 2, { invoice: invoice.id }])
    assert.equal(checkout.c_url, `${app.url}/api/payments/callback`)
    assert.match(invoice.memo, /^pay_\d+$/, 'the memo the host checkout pays with')
    assert.deepEqual((await app.get(`/api/payments/invoices/${invoice.id}`)).body.data.hostCheckout, checkout, 'the same object every time')
    // The callback before any payment: nothing on chain, nothing settled.
    const early = await post(app, '/api/payments/callback', { tx: 'cd'.repeat(32), invoice: invoice.id, account: payer })
    assert.deepEqual([early.status, early.body.data.invoice.state, early.body.data.refused], [200, 'pending', 'UNKNOWN_TRANSACTION'])
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 3 * PKOIN }], outputs: [{ address: receiver, amount: 2 * PKOIN }, { memo: memoHex(invoice.memo), amount: 0 }] })
    node.mineBlock()
    const called = await post(app, '/api/payments/callback', { tx: paid.txid, invoice: invoice.id, account: payer, email: 'a@b.c' })
    assert.deepEqual([called.body.message, called.body.data.invoice.state, called.body.data.invoice.txid], ['Callback checked', 'seen', paid.txid])
    assert.equal((await post(app, '/api/payments/callback', { tx: paid.txid, invoice: 'inv_AAAAAAAAAAAAAAAAAAAAAA' })).status, 404)
  })

  it('refuses a checkout for a Host header that is no host (400), never copying it into the callback URL', async (t) => {
    const { app } = await service(t)
    for (const host of ['x"><script>', '[:::::]', 'a.com:99999', 'a.com/evil']) {
      // fetch sends no Host but the URL's: a request of node:http's own.
      const answer = await new Promise<{ status: number, body: any }>((resolve, reject) => {
        const body = JSON.stringify({ amount: 2 * PKOIN, checkout: true })
        const outgoing = request(`${app.url}/api/payments/tips`, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, incoming => {
          let text = ''
          incoming.setEncoding('utf8').on('data', chunk => { text += chunk }).on('end', () => resolve({ status: incoming.statusCode ?? 0, body: JSON.parse(text) }))
        })
        outgoing.on('error', reject)
        outgoing.end(body)
      })
      assert.equal(answer.status, 400, host)
      assert.equal(answer.body.message, 'Invalid headers: host', host)
      assert.match(answer.body.error, /^host must be a host name or address with an optional port/, host)
    }
  })

  it('moves a seen invoice back when the block paying it is disconnected, and settles it when that block is connected again', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const invoice = (await post(app, '/api/payments/tips', { amount: PKOIN })).body.data
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: memoHex(invoice.memo), amount: 0 }] })
    node.mineBlock()
    assert.equal((await post(app, `/api/payments/invoices/${invoice.id}/transaction`, { txid: paid.txid })).body.data.invoice.state, 'seen')
    node.disconnectBlock()
    const back = (await post(app, `/api/payments/invoices/${invoice.id}/transaction`, { txid: paid.txid })).body.data.invoice
    assert.equal(back.state, 'pending', 'its block is gone: the payment is dropped and holds the invoice no more')
    // On 0.22.7 only its own block coming back mines it again (reconsiderblock); a block holding
    // it brings a transaction event, so the front-end need not report it again.
    node.reconnectBlock()
    node.mineBlock()
    let again: any
    const deadline = performance.now() + 30_000
    do {
      assert.ok(performance.now() < deadline, `still ${JSON.stringify(again?.state)}`)
      await new Promise(resolve => setTimeout(resolve, 10))
      again = (await app.get(`/api/payments/invoices/${invoice.id}`)).body.data
    } while (again.state !== 'confirmed')
    assert.equal(again.txid, paid.txid)
  })
})
