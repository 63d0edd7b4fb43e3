/**
 * A payment confirms an invoice only when more than one node shows it (PAYMENT_CONFIRM_NODES,
 * cross-check.ts): honest emulators share one chain; a lying one serves a chain of its own, where
 * the same txid sits in another block, or a payment nobody else has. The service is driven by
 * hand (`checkTransaction`, `onBlock` with the tip), with no node WebSocket, so that each read is
 * the test's.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { ChainHistory, type Emulator } from '../../devnode/server.js'
import { PocketNetProxyApi, proveInvoicePayment, readChainTransaction, type ChainTransaction, type PaymentProof } from '../../packages/pocketnet-client/index.js'
import { createPaymentStore } from '../../src/payments/create-payment-store.js'
import { judgeAnswer, PaymentCrossCheck, type ConfirmationTerms } from '../../src/payments/cross-check.js'
import type { PaymentsService } from '../../src/payments/payments-service.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { MERCHANT, paymentTransaction, txid } from './chain-transactions.js'
import { freshDataDir } from './databases.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000
const HEIGHT = 1000
const memoHex = (memo: string): string => Buffer.from(memo, 'utf8').toString('hex')

/** Honest emulators on one chain, and, when asked, a liar on a chain of its own at the same height. */
async function emulators (t: WithAfter, honest: number) {
  const chain = new ChainHistory({ height: HEIGHT })
  const nodes: Emulator[] = []
  for (let i = 0; i < honest; i++) nodes.push(await startEmulator(t, { chain }))
  const [payer, receiver] = (nodes[0] as Emulator).dataset.users.map(user => user.address) as [string, string]
  return { nodes, chain, payer, receiver }
}

async function dataDir (t: WithAfter): Promise<string> {
  const dir = await freshDataDir()
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

interface Service { app: TestApp, payments: PaymentsService, logs: Array<Record<string, unknown>> }

async function service (t: WithAfter, nodes: Emulator[], receiver: string, dir: string, env: Record<string, string> = {}): Promise<Service> {
  const logs: Array<Record<string, unknown>> = []
  const app = await startApp(t, {
    nodes: nodes.map(node => node.url),
    env: { LOG_LEVEL: 'warn', PAYMENT_ADDRESS: receiver, DATA_DIR: dir, ...env },
    logStream: { write: line => { logs.push(JSON.parse(line)) } },
  })
  return { app, payments: app.app.payments as PaymentsService, logs }
}

/** The payment as the host makes it: the amount to the receiver, the memo, the change back. */
function payment (payer: string, receiver: string, memo: string, amount = PKOIN) {
  return { inputs: [{ address: payer, amount: 3 * PKOIN }], outputs: [{ address: receiver, amount }, { memo: memoHex(memo), amount: 0 }, { address: payer, amount: 3 * PKOIN - amount - 10_000 }] }
}

const disagreements = async (app: TestApp): Promise<number> =>
  Number(/^payments_confirmation_disagreements_total (\d+)$/m.exec(await app.app.metrics.registry.metrics())?.[1])

const getrawtransactionCalls = (nodes: Emulator[]): number[] => nodes.map(node => node.callsTo('getrawtransaction').length)

describe('payments confirmed by more than one node', () => {
  it('confirms once two nodes on one chain both show the payment, each asked by name', async (t) => {
    const { nodes, chain, payer, receiver } = await emulators(t, 2)
    const { app, payments, logs } = await service(t, nodes, receiver, await dataDir(t))
    assert.equal(logs.filter(line => /PAYMENT_CONFIRM_NODES/.test(String(line.msg))).length, 0, 'two nodes configured, two asked: no warning')
    const invoice = await payments.createInvoice({ amount: PKOIN, confirmations: 2 })
    const paid = chain.addTransaction(payment(payer, receiver, invoice.memo))
    chain.mine()
    assert.equal((await payments.checkTransaction(invoice.id, paid.txid))?.invoice.state, 'seen', 'one block: seen, on whichever node answered')
    for (const node of nodes) node.clearCalls()
    chain.mine()
    await payments.onBlock(chain.tip.height)
    const confirmed = await payments.getInvoice(invoice.id)
    assert.deepEqual([confirmed?.state, confirmed?.confirmations, confirmed?.txid], ['confirmed', 2, paid.txid])
    assert.deepEqual(getrawtransactionCalls(nodes).map(calls => calls >= 1), [true, true], 'both nodes read the payment')
    assert.equal(await disagreements(app), 0)

    // One confirmation required: backed at once, so pending goes straight to confirmed.
    const quick = await payments.createInvoice({ amount: PKOIN, confirmations: 1 })
    const quickPaid = chain.addTransaction(payment(payer, receiver, quick.memo))
    chain.mine()
    assert.equal((await payments.checkTransaction(quick.id, quickPaid.txid))?.invoice.state, 'confirmed')
  })

  it('keeps an invoice seen while a node shows its payment in another block, counts it, and confirms once that node is gone', async (t) => {
    const { nodes: honest, chain, payer, receiver } = await emulators(t, 2)
    const liar = await startEmulator(t, { chain: new ChainHistory({ height: HEIGHT }) })
    const dir = await dataDir(t)
    // The liar first in the list: the cross-check asks nodes in list order.
    const first = await service(t, [liar, ...honest], receiver, dir)
    const invoice = await first.payments.createInvoice({ amount: PKOIN, confirmations: 2 })
    const paid = chain.addTransaction(payment(payer, receiver, invoice.memo))
    chain.mine()
    // The liar has the same transaction at the same height, in a block of its own making (another
    // hash), and a tip a block higher: more confirmations than the honest nodes show.
    liar.addTransaction({ ...payment(payer, receiver, invoice.memo), txid: paid.txid })
    liar.chain.mine()
    liar.chain.mine()
    assert.equal(liar.height, chain.tip.height + 1)
    assert.equal((await first.payments.checkTransaction(invoice.id, paid.txid))?.invoice.state, 'seen')
    for (let block = 0; block < 2; block++) {
      chain.mine()
      liar.chain.mine()
      await first.payments.onBlock(chain.tip.height)
    }
    const held = await first.payments.getInvoice(invoice.id)
    assert.equal(held?.state, 'seen', 'not confirmed while a node contradicts it')
    assert.ok((held?.confirmations ?? 0) < 2, 'its confirmations held one short of the requirement')
    assert.ok(await disagreements(first.app) >= 1)
    const warned = first.logs.filter(line => /contradicts/.test(String(line.msg)))
    assert.ok(warned.length >= 1)
    for (const line of warned) {
      // Node 1, the liar, contradicts an honest first answer; node 2 contradicts the liar's.
      assert.ok(line.node === 'node 1' || line.node === 'node 2', String(line.node))
      assert.deepEqual([line.level, line.txid, line.invoiceId, line.contradiction], [40, paid.txid, invoice.id, 'ANOTHER_BLOCK'])
    }
    assert.ok(!JSON.stringify(warned).includes(liar.url), 'the node is named by position, not by URL')
    // What a client reads says nothing of the nodes.
    assert.deepEqual(Object.keys((await first.app.get(`/api/payments/invoices/${invoice.id}`)).body.data).filter(key => /node/i.test(key)), [])

    // The operator takes the liar out of the list: the honest nodes agree, and it confirms.
    await first.app.app.close()
    const second = await service(t, honest, receiver, dir)
    chain.mine()
    await second.payments.onBlock(chain.tip.height)
    const confirmed = await second.payments.getInvoice(invoice.id)
    assert.deepEqual([confirmed?.state, confirmed?.txid], ['confirmed', paid.txid])
    assert.equal(await disagreements(second.app), 0)
  })

  it('with PAYMENT_CONFIRM_NODES=1, lets the node that answered decide, as before', async (t) => {
    const { nodes: honest, chain, payer, receiver } = await emulators(t, 2)
    const liar = await startEmulator(t, { chain: new ChainHistory({ height: HEIGHT }) })
    const { app, payments } = await service(t, [liar, ...honest], receiver, await dataDir(t), { PAYMENT_CONFIRM_NODES: '1' })
    const invoice = await payments.createInvoice({ amount: PKOIN, confirmations: 1 })
    const paid = chain.addTransaction(payment(payer, receiver, invoice.memo))
    chain.mine()
    liar.addTransaction({ ...payment(payer, receiver, invoice.memo), txid: paid.txid })
    liar.chain.mine()
    const allNodes = [liar, ...honest]
    for (const node of allNodes) node.clearCalls()
    // Whichever node the pool picks, its word alone confirms: the liar's block or the honest one.
    assert.equal((await payments.checkTransaction(invoice.id, paid.txid))?.invoice.state, 'confirmed')
    assert.equal(getrawtransactionCalls(allNodes).reduce((sum, calls) => sum + calls, 0), 1, 'one read, no other node asked')
    assert.equal(await disagreements(app), 0)
  })

  it('with one node configured and the default of two, confirms on that node, warning once at start', async (t) => {
    const { nodes, chain, payer, receiver } = await emulators(t, 1)
    const { payments, logs } = await service(t, nodes, receiver, await dataDir(t))
    const invoice = await payments.createInvoice({ amount: PKOIN, confirmations: 2 })
    const paid = chain.addTransaction(payment(payer, receiver, invoice.memo))
    chain.mine()
    chain.mine()
    payments.noteTip(chain.tip.height)
    assert.equal((await payments.checkTransaction(invoice.id, paid.txid))?.invoice.state, 'confirmed')
    const warnings = logs.filter(line => /PAYMENT_CONFIRM_NODES/.test(String(line.msg)))
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.level, 40, 'at warn')
    assert.match(String(warnings[0]?.msg), /asks 2 nodes .* names 1: confirmations rest on one node's word/)
  })
})

describe('an answer not backed yet, in the invoice store', () => {
  it('moves the invoice to seen at most, holding its confirmations one short, until an answer counts', async (t) => {
    const store = await createPaymentStore({ dataDir: await dataDir(t) })
    t.after(() => store.close())
    for (const required of [1, 3]) {
      const invoice = await store.invoices.createInvoice({ amountSat: PKOIN, receiver: MERCHANT, expiresInS: 3600, confirmations: required })
      const observation = { txid: txid(required), transaction: paymentTransaction({ txid: txid(required), amountSat: PKOIN, memo: invoice.memo, height: 100 }), tipHeight: 110 }
      const held = await store.invoices.recordObservation(invoice.id, { ...observation, confirmable: false })
      assert.deepEqual([held.invoice.state, held.invoice.confirmations, held.proof?.confirmations], ['seen', required - 1, 11], `${required} required`)
      const backed = await store.invoices.recordObservation(invoice.id, observation)
      assert.deepEqual([backed.invoice.state, backed.invoice.confirmations], ['confirmed', 11])
      // Confirmed is final: an answer not backed later holds nothing back.
      const after = await store.invoices.recordObservation(invoice.id, { ...observation, tipHeight: 111, confirmable: false })
      assert.deepEqual([after.invoice.state, after.invoice.confirmations], ['confirmed', 12])
    }
  })
})

describe('the cross-check of one answer', () => {
  /** The first answer's proof, as the service makes it once before asking the other nodes. */
  const proofOf = (answer: ChainTransaction, terms: ConfirmationTerms, tipHeight = 1_000_000): PaymentProof => proveInvoicePayment(answer, terms, tipHeight)

  const silent = { warn () {}, debug () {} }

  it('finds out a payment one node invented: the others do not know it', async (t) => {
    const { nodes: honest, payer, receiver } = await emulators(t, 2)
    const liar = await startEmulator(t, { chain: new ChainHistory({ height: HEIGHT }) })
    const api = await PocketNetProxyApi.create({ nodes: [liar.url, ...honest.map(node => node.url)], probeIntervalMs: 3_600_000 })
    t.after(() => api.close())
    const terms: ConfirmationTerms = { receiver, amountSat: PKOIN, memo: 'pk_invented', confirmationsRequired: 1 }
    const invented = liar.addTransaction(payment(payer, receiver, terms.memo))
    liar.chain.mine()
    const answer = readChainTransaction(await api.rpc.getrawtransaction({ txid: invented.txid }, { node: 'node 1' }))
    assert.ok(answer?.blockHash !== undefined, 'the liar shows it in a block')
    const warned: object[] = []
    const crossCheck = new PaymentCrossCheck({ nodesRequired: 2, log: { ...silent, warn: fields => warned.push(fields) } })
    assert.equal(await crossCheck.backs(api, proofOf(answer, terms), terms, 'inv_test'), false)
    assert.equal(crossCheck.disagreements, 1)
    assert.deepEqual(warned, [{ node: 'node 2', txid: invented.txid, invoiceId: 'inv_test', contradiction: 'UNKNOWN_TRANSACTION' }])
  })

  it('goes on to the next node when one cannot answer, and needs as many as it asks for', async (t) => {
    const { nodes, chain, payer, receiver } = await emulators(t, 3)
    const api = await PocketNetProxyApi.create({ nodes: nodes.map(node => node.url), probeIntervalMs: 3_600_000 })
    t.after(() => api.close())
    const terms: ConfirmationTerms = { receiver, amountSat: PKOIN, memo: 'pk_real', confirmationsRequired: 1 }
    const paid = chain.addTransaction(payment(payer, receiver, terms.memo))
    chain.mine()
    const answer = readChainTransaction(await api.rpc.getrawtransaction({ txid: paid.txid }))
    assert.ok(answer !== undefined)
    nodes[0]?.setFault({ kind: 'html' }, { method: 'getrawtransaction', times: 1 })
    const crossCheck = new PaymentCrossCheck({ nodesRequired: 2, log: silent })
    assert.equal(await crossCheck.backs(api, proofOf(answer, terms), terms, 'inv_test'), true, 'nodes 2 and 3 back it')
    assert.equal(crossCheck.disagreements, 0, 'a node that failed contradicts nothing')
    // Two of three must agree, and two are out of reach now: not backed, not contradicted.
    nodes[1]?.setFault({ kind: 'html' }, { method: 'getrawtransaction' })
    nodes[2]?.setFault({ kind: 'html' }, { method: 'getrawtransaction' })
    assert.equal(await crossCheck.backs(api, proofOf(answer, terms), terms, 'inv_test'), false)
    assert.equal(crossCheck.disagreements, 0)
  })

  it('judges an answer against the first: same block, same memo, as much paid, deep enough by its own tip', () => {
    const receiver = 'PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82'
    const terms: ConfirmationTerms = { receiver, amountSat: 1000, memo: 'pk_m', confirmationsRequired: 3 }
    const transaction = (changes: { height?: number, blockHash?: string, satoshi?: number, memo?: string, txid?: string } = {}) => ({
      txid: changes.txid ?? 'aa'.repeat(32),
      height: changes.height ?? 100,
      blockHash: changes.blockHash ?? 'bb'.repeat(32),
      inputs: [],
      outputs: [
        { n: 0, addresses: [receiver], satoshi: changes.satoshi ?? 1000, scriptHex: '' },
        { n: 1, addresses: [''], satoshi: 0, scriptHex: `6a04${memoHex(changes.memo ?? 'pk_m')}` },
      ],
    })
    const first = proofOf(transaction(), terms, 102)
    assert.equal(judgeAnswer(first, transaction(), 102, terms), 'agrees')
    assert.equal(judgeAnswer(first, transaction({ satoshi: 2000 }), 102, terms), 'agrees', 'more paid than the first says backs it')
    assert.equal(judgeAnswer(first, transaction(), 101, terms), 'shallow', 'a node a block behind: not yet')
    assert.equal(judgeAnswer(first, null, 102, terms), 'UNKNOWN_TRANSACTION')
    assert.equal(judgeAnswer(first, transaction({ txid: 'cc'.repeat(32) }), 102, terms), 'ANOTHER_TRANSACTION')
    const { height, blockHash, ...inMempool } = transaction()
    assert.ok(height !== undefined && blockHash !== undefined)
    assert.equal(judgeAnswer(first, inMempool, 102, terms), 'NOT_IN_BLOCK')
    assert.equal(judgeAnswer(first, transaction({ blockHash: 'dd'.repeat(32) }), 102, terms), 'ANOTHER_BLOCK')
    assert.equal(judgeAnswer(first, transaction({ height: 99 }), 102, terms), 'ANOTHER_BLOCK')
    assert.equal(judgeAnswer(first, transaction({ memo: 'pk_x' }), 102, terms), 'MEMO_MISMATCH')
    assert.equal(judgeAnswer(first, transaction({ satoshi: 999 }), 102, terms), 'PAID_LESS')
  })
})
