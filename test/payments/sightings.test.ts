/**
 * A payment the watcher was told of is never forgotten until read (issue #39, finding 1): a read
 * the node fails is tried again, a block crowded with payments to the receiver is read a few at a
 * time instead of shedding most reads, and reports of one txid share one node call.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { startApp, type TestApp } from '../helpers/build-app.js'
import type { Emulator } from '../../devnode/server.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'
import { freshDataDir } from './databases.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000

async function service (t: WithAfter, emulator: Parameters<typeof startEmulator>[1] = {}) {
  const node = await startEmulator(t, emulator)
  const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const app = await startApp(t, {
    nodes: [node.url],
    env: { EVENTS_INGEST: 'true', PAYMENT_ADDRESS: receiver, PAYMENT_TIPS: 'true', PAYMENT_TIP_MIN_SAT: '1', PAYMENT_CONFIRMATIONS: '2', DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', PAYMENT_TIP_RATE_LIMIT_MAX: '1000' },
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

const stateOf = async (app: TestApp, id: string): Promise<string> => (await app.get(`/api/payments/invoices/${id}`)).body.data.state

async function metric (app: TestApp, name: string): Promise<number> {
  const text = (await app.get('/metrics')).body as string
  const line = text.split('\n').find(row => row.startsWith(`${name} `))
  return line === undefined ? Number.NaN : Number(line.split(' ')[1])
}

const readsOf = (node: Emulator, txid: string): number => node.callsTo('getrawtransaction').filter(call => JSON.stringify(call.params).includes(txid)).length

describe('payments the watcher sighted', () => {
  it('reads a payment again after the node failed its read, with no block after it, and settles the invoice', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const invoice = (await post(app, '/api/payments/tips', { amount: PKOIN })).body.data
    // The node's proxy fails the next reads of a transaction, as a 502 page.
    node.setFault({ kind: 'html', status: 502 }, { method: 'getrawtransaction', times: 2 })
    node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: memoHex(invoice.memo), amount: 0 }] })
    node.mineBlock()
    // No other block comes: only a retry of the failed read can find the payment.
    await waitFor('the invoice seen', async () => await stateOf(app, invoice.id) === 'seen')
    assert.ok(await metric(app, 'payments_sighting_read_failures_total') >= 1, 'the first read failed')
    await waitFor('the sighting forgotten once read', async () => await metric(app, 'payments_sighting_read_failures_total') >= 1 && await metric(app, 'payments_sightings_unread') === 0)
  })

  it('reads every payment of a block crowded with payments to the receiver, a few at a time, and settles each invoice paid in it', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const invoices = await Promise.all(Array.from({ length: 10 }, async () => (await post(app, '/api/payments/tips', { amount: PKOIN })).body.data))
    const paying = new Set<string>()
    for (let i = 0; i < 100; i++) {
      const invoice = i % 10 === 9 ? invoices[Math.floor(i / 10)] : undefined
      if (invoice === undefined) node.addTransaction({ inputs: [{ address: payer, amount: 2000 }], outputs: [{ address: receiver, amount: 1 }] })
      else paying.add(node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: memoHex(invoice.memo), amount: 0 }] }).txid)
    }
    // The node is overloaded for a while: its first reads of transactions are refused.
    node.setFault({ kind: 'work-queue' }, { method: 'getrawtransaction', times: 60 })
    node.mineBlock()
    for (const invoice of invoices) await waitFor(`invoice ${invoice.id as string} seen`, async () => await stateOf(app, invoice.id) === 'seen')
    await waitFor('every sighting read', async () => await metric(app, 'payments_sightings_unread') === 0)
  })

  it('shares one node call among reports of one txid that arrive together', async (t) => {
    const { node, app, payer, receiver } = await service(t)
    const invoice = (await post(app, '/api/payments/tips', { amount: PKOIN })).body.data
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 2 * PKOIN }], outputs: [{ address: receiver, amount: PKOIN }, { memo: memoHex(invoice.memo), amount: 0 }] })
    // Slow answers, so that the reports overlap.
    node.setFault({ kind: 'latency', ms: 200 }, { method: 'getrawtransaction' })
    const before = readsOf(node, paid.txid)
    const reports = await Promise.all(Array.from({ length: 20 }, () => post(app, `/api/payments/invoices/${invoice.id}/transaction`, { txid: paid.txid })))
    assert.deepEqual(new Set(reports.map(report => report.status)), new Set([200]))
    const reads = readsOf(node, paid.txid) - before
    // The watcher may read it on its own too (it heard of the transaction): one read each, at most.
    assert.ok(reads >= 1 && reads <= 2, `20 reports cost ${reads} reads`)
  })
})
