/**
 * Payouts and refunds through the service (issue #38), on the emulator's chain, which decodes and
 * checks the signatures of what it is sent: a payout signed, stored, broadcast and confirmed after
 * the required blocks; the same key answering the same payout; the operators' routes and their
 * refusals; a broadcast whose answer was lost sent again as the same bytes; two payouts at once
 * from a wallet of two outputs; a refund to the payer's address, partial ones summing to at most
 * what was paid. The wallet's key is a throwaway made here.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { describe, it } from 'node:test'
import { rmSync } from 'node:fs'
import { buildPayment, decodeTransaction, walletKeyFromWif } from 'pocketnet-client'
import { getDefaultDataset } from '../../devnode/data/generate.js'
import type { Emulator } from '../../devnode/server.js'
import type { PayoutsService } from '../../src/payouts/payouts-service.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { hotWalletKeyFile } from '../helpers/hot-wallet.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startPostgres } from '../helpers/start-postgres.js'
import { freshDataDir } from '../payments/databases.js'
import { waitFor } from '../helpers/wait-for.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000
const ADMIN_TOKEN = 'payouts-test-admin-token-0123456789abcdef'

interface Setup {
  /** The service's clock (epoch ms): moved by hand past a broadcast's backoff. */
  clock: { now: number }
  node: Emulator
  app: TestApp
  payouts: PayoutsService
  wallet: string
  users: string[]
}

async function service (t: WithAfter, env: Record<string, string> = {}, funds: number[] = [10 * PKOIN]): Promise<Setup> {
  const node = await startEmulator(t)
  const key = hotWalletKeyFile(t)
  for (const amountSat of funds) node.fund(key.address, amountSat)
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const clock = { now: Date.parse('2026-11-29T10:00:00.000Z') }
  const app = await startApp(t, {
    now: () => clock.now,
    nodes: [node.url],
    env: { PAYOUT_KEY_FILE: key.path, PAYOUT_CONFIRMATIONS: '2', ADMIN_TOKEN, DATA_DIR: dataDir, PAYOUT_CHECK_INTERVAL_S: '3600', ...env },
  })
  return { clock, node, app, payouts: app.app.payouts as PayoutsService, wallet: key.address, users: node.dataset.users.map(user => user.address) }
}

/** POSTs JSON with the admin token, another token, or none (null). */
async function post (app: TestApp, path: string, body: unknown, token: string | null = ADMIN_TOKEN) {
  const response = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as any }
}

const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }

/** What the transactions `txids` paid `address` in blocks of the chain, output by output. */
function paidTo (node: Emulator, address: string, txids: string[]): Array<{ txid: string, amountSat: number }> {
  const paid: Array<{ txid: string, amountSat: number }> = []
  for (const txid of txids) {
    const found = node.chain.findTransaction(txid)
    if (found?.block === undefined) continue
    for (const output of found.transaction.outputs) if (output.address === address) paid.push({ txid, amountSat: output.amount })
  }
  return paid
}

describe('payouts through the service', () => {
  it('signs, stores and broadcasts a payout, confirms it after the required blocks, and answers the same payout for its key', async (t) => {
    const { node, app, payouts, wallet, users } = await service(t)
    const receiver = users[0] as string
    const body = { to: receiver, amountSat: 150_000_000, memo: 'Weekly prize', idempotencyKey: 'prize-week-48' }
    const created = await post(app, '/api/admin/payouts', body)
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const payout = created.body.data
    assert.deepEqual([payout.state, payout.to, payout.amountSat, payout.kind, payout.memo], ['broadcast', receiver, 150_000_000, 'payout', 'Weekly prize'])
    assert.ok(payout.feeSat > 0)
    // What the node got: our signature, checked by the emulator; the receiver's output, the memo, the change back.
    const sent = decodeTransaction(node.callsTo('sendrawtransaction').at(-1)?.params instanceof Array ? (node.callsTo('sendrawtransaction').at(-1)?.params as string[])[0] as string : '')
    assert.equal(sent.outputs[0]?.amountSat, 150_000_000)
    assert.equal(Buffer.from(sent.outputs[1]?.scriptPubKey ?? []).subarray(2).toString('utf8'), 'Weekly prize')
    assert.equal(sent.outputs[2]?.amountSat, 10 * PKOIN - 150_000_000 - payout.feeSat, 'the change, less the fee')

    const again = await post(app, '/api/admin/payouts', body)
    assert.deepEqual([again.status, again.body.data.id, again.body.data.txid], [200, payout.id, payout.txid])
    const reused = await post(app, '/api/admin/payouts', { ...body, amountSat: 150_000_001 })
    assert.deepEqual([reused.status, reused.body.code], [409, 'PAYOUT_ERR_KEY_REUSED'])

    node.mineBlock()
    await payouts.check()
    const inBlock = (await app.get(`/api/admin/payouts/${payout.id as string}`, admin)).body.data
    assert.deepEqual([inBlock.state, inBlock.confirmations, inBlock.height], ['broadcast', 1, node.height])
    node.mineBlock()
    await payouts.check()
    const confirmed = (await app.get(`/api/admin/payouts/${payout.id as string}`, admin)).body.data
    assert.deepEqual([confirmed.state, confirmed.confirmations], ['confirmed', 2])
    assert.deepEqual(confirmed.log.map((entry: { state: string, actor: string }) => [entry.state, entry.actor]), [['pending', 'admin'], ['broadcast', 'service'], ['confirmed', 'service']], 'the audit log')
    assert.equal(confirmed.log[0].detail.txid, payout.txid)
    assert.deepEqual(paidTo(node, receiver, [payout.txid]), [{ txid: payout.txid, amountSat: 150_000_000 }], 'paid once, in a block')
    const ready = (await app.get('/readyz')).body.data.payouts
    assert.deepEqual(ready, { address: wallet, balanceSat: 10 * PKOIN - 150_000_000 - payout.feeSat })
    const metrics = await (await fetch(`${app.url}/metrics`)).text()
    for (const state of ['pending', 'broadcast', 'confirmed']) assert.match(metrics, new RegExp(`payouts_total\\{state="${state}"\\} 1\n`), `each state counted once: ${state}`)
    assert.match(metrics, /payouts_open\{state="broadcast"\} 0/)
    assert.match(metrics, /payouts_oldest_open_age_seconds 0/)
    assert.match(metrics, /payouts_confirmed_satoshi_total 150000000/)
  })

  it('refuses what breaks a rule or a limit, before signing anything, with a stable code; without the token, 401', async (t) => {
    const users = getDefaultDataset().users.map(user => user.address)
    const { node, app } = await service(t, { PAYOUT_MAX_SAT: String(2 * PKOIN), PAYOUT_DAILY_MAX_SAT: String(3 * PKOIN), PAYOUT_ALLOWLIST: `${users[0] as string},${users[1] as string}` })
    const to = users[0] as string
    const refusals: Array<[unknown, number, string]> = [
      [{ to: 'not-an-address', amountSat: PKOIN, idempotencyKey: 'r1' }, 400, 'PAYOUT_ERR_ADDRESS'],
      [{ to, amountSat: 545, idempotencyKey: 'r2' }, 400, 'PAYOUT_ERR_AMOUNT'],
      [{ to, amountSat: PKOIN, memo: 'x'.repeat(81), idempotencyKey: 'r3' }, 400, 'PAYOUT_ERR_MEMO'],
      [{ to, amountSat: 2 * PKOIN + 1, idempotencyKey: 'r4' }, 422, 'PAYOUT_ERR_OVER_LIMIT'],
      [{ to: users[2], amountSat: PKOIN, idempotencyKey: 'r5' }, 422, 'PAYOUT_ERR_NOT_ALLOWED'],
    ]
    for (const [body, status, code] of refusals) {
      const answer = await post(app, '/api/admin/payouts', body)
      assert.deepEqual([answer.status, answer.body.code], [status, code], JSON.stringify(body))
    }
    const bad = await post(app, '/api/admin/payouts', { to, amountSat: PKOIN, idempotencyKey: 'has space' })
    assert.equal(bad.status, 400)
    const noToken = await post(app, '/api/admin/payouts', { to, amountSat: PKOIN, idempotencyKey: 'r6' }, null)
    assert.equal(noToken.body.code, 'ADMIN_TOKEN_MISSING', JSON.stringify(noToken))
    assert.equal((await post(app, '/api/admin/payouts', { to, amountSat: PKOIN, idempotencyKey: 'r6' }, 'wrong-token-wrong-token-wrong-token-00')).status, 401)
    assert.equal(node.callsTo('sendrawtransaction').length, 0, 'nothing sent')
    assert.equal((await post(app, '/api/admin/payouts', { to, amountSat: 2 * PKOIN, idempotencyKey: 'd1' })).status, 201)
    const overDay = await post(app, '/api/admin/payouts', { to, amountSat: PKOIN + 1, idempotencyKey: 'd2' })
    assert.deepEqual([overDay.status, overDay.body.code], [422, 'PAYOUT_ERR_DAILY_LIMIT'])
    const poor = await post(app, '/api/admin/payouts', { to, amountSat: PKOIN, idempotencyKey: 'd3' })
    assert.deepEqual([poor.status, poor.body.code], [422, 'PAYOUT_ERR_INSUFFICIENT_FUNDS'], 'the one output is held by the first payout until it confirms')
    assert.equal((await app.get('/api/admin/payouts/po_nosuchpayout00000000', admin)).body.code, 'PAYOUT_ERR_NOT_FOUND')
  })

  it('sends the same bytes again when the node took a broadcast but its answer was lost: one transaction, paid once', async (t) => {
    const { clock, node, app, payouts, users } = await service(t)
    const receiver = users[1] as string
    const told: string[] = []
    payouts.onChange(payout => { told.push(payout.state) })
    node.setFault({ kind: 'drop-after-accept' }, { method: 'sendrawtransaction', times: 1 })
    const created = await post(app, '/api/admin/payouts', { to: receiver, amountSat: PKOIN, idempotencyKey: 'lost-answer' })
    assert.equal(created.status, 201)
    assert.equal(created.body.data.state, 'pending', 'no answer: not known to be taken')
    clock.now += 3_000
    assert.deepEqual(await payouts.open(), { pending: 1, broadcast: 0, oldestAgeS: 3 }, 'seen waiting, not stalled silently')
    await payouts.check()
    assert.equal((await app.get(`/api/admin/payouts/${created.body.data.id as string}`, admin)).body.data.state, 'pending', 'waiting out the backoff')
    clock.now += 2_000
    await payouts.check()
    const taken = (await app.get(`/api/admin/payouts/${created.body.data.id as string}`, admin)).body.data
    assert.deepEqual([taken.state, taken.txid], ['broadcast', created.body.data.txid])
    node.mineBlock()
    node.mineBlock()
    await payouts.check()
    assert.equal((await app.get(`/api/admin/payouts/${created.body.data.id as string}`, admin)).body.data.state, 'confirmed')
    const sent = new Set(node.callsTo('sendrawtransaction').map(call => (call.params as string[])[0]))
    assert.equal(sent.size, 1, 'every broadcast the same bytes')
    assert.deepEqual(told, ['pending', 'broadcast', 'confirmed'], 'each state told once, the broadcast a check found too')
    assert.deepEqual(paidTo(node, receiver, [created.body.data.txid]), [{ txid: created.body.data.txid, amountSat: PKOIN }])
  })

  it('waits, without sending in a loop, when a re-org took its block and another transaction now spends its output', async (t) => {
    const node = await startEmulator(t)
    const key = hotWalletKeyFile(t)
    const coin = node.fund(key.address, 2 * PKOIN)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const app = await startApp(t, { nodes: [node.url], env: { PAYOUT_KEY_FILE: key.path, PAYOUT_CONFIRMATIONS: '2', DATA_DIR: dataDir, PAYOUT_CHECK_INTERVAL_S: '3600' } })
    const payouts = app.app.payouts as PayoutsService
    const users = node.dataset.users.map(user => user.address)
    const { payout } = await payouts.send({ to: users[0] as string, amountSat: PKOIN, idempotencyKey: 'rival' })
    node.mineBlock()
    await payouts.check()
    assert.equal((await payouts.get(payout.id)).height, node.height)
    node.disconnectBlock()
    // A rival from the same wallet spends the output the disconnected payout spent.
    const rival = buildPayment(walletKeyFromWif(key.wif, 'main'), {
      coins: [{ txid: coin.txid, vout: coin.vout, address: key.address, amountSat: coin.amountSat, confirmations: 6, height: coin.height, coinbase: false, pocketTx: false }],
      outputs: [{ address: users[1] as string, amountSat: PKOIN / 2 }],
      feeRateSatPerKb: 10_000,
      nTime: Math.floor(Date.now() / 1000),
    })
    const sent = await fetch(`${node.url}/post/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: 'sendrawtransaction', params: [rival.hex, {}] }) })
    assert.equal((await sent.json() as { result: string }).result, rival.txid)
    const before = node.callsTo('sendrawtransaction').length
    await payouts.check()
    assert.ok(node.callsTo('sendrawtransaction').length - before <= 2, 'sent again once, then waits out a backoff')
    const waiting = await payouts.get(payout.id)
    assert.deepEqual([waiting.state, waiting.height], ['broadcast', undefined])
    await payouts.check()
    assert.ok(node.callsTo('sendrawtransaction').length - before <= 2, 'not sent again before its backoff')
  })

  it('gives two payouts at once disjoint outputs, and a third none while they are held', async (t) => {
    const { node, app, payouts, users } = await service(t, {}, [2 * PKOIN, 2 * PKOIN])
    const [a, b] = await Promise.all([
      payouts.send({ to: users[0] as string, amountSat: PKOIN, idempotencyKey: 'both-1' }),
      payouts.send({ to: users[1] as string, amountSat: PKOIN, idempotencyKey: 'both-2' }),
    ])
    assert.deepEqual([a.payout.state, b.payout.state], ['broadcast', 'broadcast'])
    const inputs = node.callsTo('sendrawtransaction').map(call => decodeTransaction((call.params as string[])[0] as string).inputs.map(input => `${input.txid}:${input.vout}`)).flat()
    assert.equal(new Set(inputs).size, 2)
    await assert.rejects(payouts.send({ to: users[2] as string, amountSat: PKOIN, idempotencyKey: 'both-3' }), { code: 'PAYOUT_ERR_INSUFFICIENT_FUNDS' })
    node.mineBlock()
    node.mineBlock()
    await payouts.check()
    for (const { payout } of [a, b]) assert.equal((await app.get(`/api/admin/payouts/${payout.id}`, admin)).body.data.state, 'confirmed')
  })

  it('refunds a confirmed invoice to the address its payment came from, never more than was paid, and refuses a second full refund', async (t) => {
    const users = getDefaultDataset().users.map(user => user.address)
    const [payer, merchant] = [users[0] as string, users[3] as string]
    const { node, app, payouts } = await service(t, { PAYMENT_ADDRESS: merchant, PAYMENT_CONFIRMATIONS: '1' }, [2 * PKOIN, 2 * PKOIN])
    const payments = app.app.payments
    assert.ok(payments !== undefined)
    const invoice = await payments.createInvoice({ amount: 150_000_000 })
    const unpaid = await payments.createInvoice({ amount: 150_000_000 })
    const paid = node.addTransaction({ inputs: [{ address: payer, amount: 10 * PKOIN }], outputs: [{ address: merchant, amount: 150_000_000 }, { memo: Buffer.from(invoice.memo).toString('hex'), amount: 0 }] })
    node.mineBlock()
    const reported = await post(app, `/api/payments/invoices/${invoice.id}/transaction`, { txid: paid.txid }, null)
    assert.equal(reported.body.data.invoice.state, 'confirmed', JSON.stringify(reported.body))

    const part = await payments.refund(invoice.id, { amountSat: 50_000_000 })
    assert.deepEqual([part.created, part.payout.kind, part.payout.invoiceId, part.payout.to, part.payout.amountSat, part.payout.state], [true, 'refund', invoice.id, payer, 50_000_000, 'broadcast'])
    const tooMuch = await post(app, `/api/admin/invoices/${invoice.id}/refund`, { amountSat: 100_000_001 })
    assert.deepEqual([tooMuch.status, tooMuch.body.code], [422, 'REFUND_ERR_TOO_MUCH'])
    const rest = await post(app, `/api/admin/invoices/${invoice.id}/refund`, { idempotencyKey: 'refund-rest' })
    assert.deepEqual([rest.status, rest.body.data?.amountSat, rest.body.data?.to], [201, 100_000_000, payer], JSON.stringify(rest.body))
    const retried = await post(app, `/api/admin/invoices/${invoice.id}/refund`, { idempotencyKey: 'refund-rest' })
    assert.deepEqual([retried.status, retried.body.data.id], [200, rest.body.data.id], 'the same refund for its key')
    const again = await post(app, `/api/admin/invoices/${invoice.id}/refund`, {})
    assert.deepEqual([again.status, again.body.code], [409, 'REFUND_ERR_ALREADY_REFUNDED'])
    assert.deepEqual([(await post(app, `/api/admin/invoices/${unpaid.id}/refund`, {})).body.code, (await post(app, '/api/admin/invoices/inv_nosuch/refund', {})).body.code], ['REFUND_ERR_NOT_CONFIRMED', 'REFUND_ERR_INVOICE_NOT_FOUND'])
    node.mineBlock()
    node.mineBlock()
    await payouts.check()
    assert.deepEqual(paidTo(node, payer, [part.payout.txid, rest.body.data.txid]).map(output => output.amountSat), [50_000_000, 100_000_000])
  })
  it('tells the webhook of each transition of a payout, once each, under the key payout:<id>:<state>', async (t) => {
    const received: Array<{ id: string, type: string, payout: { id: string, state: string, txid: string } }> = []
    const server = createServer((request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        received.push(JSON.parse(body))
        response.end()
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.after(() => new Promise(resolve => server.close(resolve)))
    const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
    const merchant = getDefaultDataset().users[3]?.address as string
    const { node, payouts, users } = await service(t, { PAYMENT_ADDRESS: merchant, PAYMENT_WEBHOOK_URL: hook, PAYMENT_WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters-at-least' })
    const { payout } = await payouts.send({ to: users[0] as string, amountSat: PKOIN, idempotencyKey: 'told' })
    node.mineBlock()
    node.mineBlock()
    await payouts.check()
    await waitFor('the three events delivered', () => received.length >= 3)
    assert.deepEqual(received.map(event => [event.id, event.type, event.payout.state, event.payout.txid]), [
      [`payout:${payout.id}:pending`, 'payoutPending', 'pending', payout.txid],
      [`payout:${payout.id}:broadcast`, 'payoutBroadcast', 'broadcast', payout.txid],
      [`payout:${payout.id}:confirmed`, 'payoutConfirmed', 'confirmed', payout.txid],
    ])
  })
})

describe('payouts of two instances on one PostgreSQL server', () => {
  it('never spend one output twice, and the instance holding the payouts lease confirms both instances\' payouts', async (t) => {
    const postgres = await startPostgres(t)
    const node = await startEmulator(t)
    const key = hotWalletKeyFile(t)
    for (let n = 0; n < 4; n++) node.fund(key.address, PKOIN)
    const env = { PAYOUT_KEY_FILE: key.path, PAYOUT_CONFIRMATIONS: '2', DATABASE_URL: await postgres.freshDatabase(), PAYOUT_CHECK_INTERVAL_S: '3600' }
    const apps = [await startApp(t, { nodes: [node.url], env }), await startApp(t, { nodes: [node.url], env })]
    const instances = apps.map(app => app.app.payouts as PayoutsService)
    const users = node.dataset.users.map(user => user.address)
    const made = await Promise.all([0, 1, 2, 3].map(n => (instances[n % 2] as PayoutsService).send({ to: users[n] as string, amountSat: PKOIN / 2, idempotencyKey: `two-${n}` })))
    assert.deepEqual(made.map(outcome => outcome.payout.state), ['broadcast', 'broadcast', 'broadcast', 'broadcast'])
    const inputs = node.callsTo('sendrawtransaction').flatMap(call => decodeTransaction((call.params as string[])[0] as string).inputs.map(input => `${input.txid}:${input.vout}`))
    assert.deepEqual([inputs.length, new Set(inputs).size], [4, 4], 'four outputs, each spent once')
    node.mineBlock()
    node.mineBlock()
    await Promise.all(instances.map(instance => instance.check()))
    for (const { payout } of made) assert.equal((await (instances[1] as PayoutsService).get(payout.id)).state, 'confirmed', `${payout.id}, by whichever instance holds the lease`)
  })
})
