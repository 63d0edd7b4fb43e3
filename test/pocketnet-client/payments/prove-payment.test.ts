import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { readChainTransaction, type ChainTransaction } from '../../../packages/pocketnet-client/payments/chain-transaction.js'
import { memoScriptHex } from '../../../packages/pocketnet-client/payments/op-return.js'
import { proveInvoicePayment } from '../../../packages/pocketnet-client/payments/prove-payment.js'

const MERCHANT = 'mwtvjM7XYJ59cbotx8ZerEJtnzmeshwH9G'
const MINER = 'mvmQvHFvYB1a1CtkTrYaZdELk15d2sB86z'
/** The tip when the dataset's payments were recorded. */
const TIP = 1095

async function recorded (name: string): Promise<ChainTransaction> {
  const body = JSON.parse(await readFile(new URL(`../../fixtures/payments/getrawtransaction-${name}.json`, import.meta.url), 'utf8')) as { result: unknown }
  const transaction = readChainTransaction(body.result)
  assert.ok(transaction, name)
  return transaction
}

/** A payment in the node's shape, for the cases no recorded transaction has. */
function payment (outputs: Array<[string, number]>, memos: string[], options: { from?: string, fromSat?: number, height?: number } = {}): ChainTransaction {
  return {
    txid: 'cd'.repeat(32),
    ...(options.height === undefined ? {} : { height: options.height, blockHash: 'ef'.repeat(32) }),
    inputs: [{ address: options.from ?? MINER, satoshi: options.fromSat ?? 5_000_000_000 }],
    outputs: [
      ...outputs.map(([address, satoshi], n) => ({ n, addresses: [address], satoshi, scriptHex: '76a914' })),
      ...memos.map((memo, i) => ({ n: outputs.length + i, addresses: [''], satoshi: 0, scriptHex: memoScriptHex(memo) })),
    ],
  }
}

describe('what a real payment proves', () => {
  it('the exact payment: paid in full, memo matching, 9 confirmations at the tip', async () => {
    const proof = proveInvoicePayment(await recorded('inv-demo-exact'), { receiver: MERCHANT, amountSat: 150_000_000, memo: 'inv_demo_exact' }, TIP)
    assert.deepEqual(proof, {
      txid: '01ec6ec53d90043504945901b3e43f1de1646795c5cb4c1ba573c94995684cf8',
      receivedSat: 150_000_000,
      expectedSat: 150_000_000,
      outcome: 'exact',
      shortSat: 0,
      excessSat: 0,
      memo: 'inv_demo_exact',
      memoMatches: true,
      fromReceiver: false,
      inBlock: true,
      height: 1087,
      blockHash: '5dede899b30c9647943980fde6bcf1c53138ea5253c6aeabe94a2396487b8e7a',
      confirmations: 9,
      pays: true,
    })
  })

  it('the short payment: underpaid by 1 PKOIN, so it does not pay', async () => {
    const proof = proveInvoicePayment(await recorded('inv-demo-short'), { receiver: MERCHANT, amountSat: 150_000_000, memo: 'inv_demo_short' }, TIP)
    assert.deepEqual([proof.outcome, proof.receivedSat, proof.shortSat, proof.memoMatches, proof.pays, proof.confirmations], ['underpaid', 50_000_000, 100_000_000, true, false, 8])
  })

  it('a payment with another memo does not pay the invoice, whatever the amount', async () => {
    const tx = await recorded('not-an-invoice')
    const proof = proveInvoicePayment(tx, { receiver: MERCHANT, amountSat: 150_000_000, memo: 'inv_demo_exact' }, TIP)
    assert.deepEqual([proof.outcome, proof.excessSat, proof.memo, proof.memoMatches, proof.pays], ['overpaid', 50_000_000, 'not_an_invoice', false, false])
    assert.equal(proveInvoicePayment(tx, { receiver: MERCHANT, amountSat: 150_000_000, memo: 'not_an_invoice' }, TIP).pays, true)
  })

  it('a payment to another address pays this receiver nothing', async () => {
    const proof = proveInvoicePayment(await recorded('inv-demo-exact'), { receiver: 'mm195TviyjXXxeuYsRdkCPo4gZpLaMw564', amountSat: 150_000_000, memo: 'inv_demo_exact' }, TIP)
    assert.deepEqual([proof.outcome, proof.receivedSat, proof.shortSat, proof.pays], ['unpaid', 0, 150_000_000, false])
  })

  it('the receiver\'s own change is not a payment to it', async () => {
    // merchant spent 2 PKOIN: 0.5 to someone else with a memo, 1.499 back to itself.
    const tx = await recorded('change-back-to-receiver')
    const proof = proveInvoicePayment(tx, { receiver: MERCHANT, amountSat: 100_000_000, memo: 'inv_change_back' }, 1097)
    assert.deepEqual([proof.receivedSat, proof.outcome, proof.fromReceiver, proof.memoMatches, proof.pays], [0, 'unpaid', true, true, false])
    assert.equal(tx.outputs.find(output => output.addresses[0] === MERCHANT)?.satoshi, 149_900_000)
  })

  it('a long memo and a UTF-8 memo match; eight decimals are counted exactly', async () => {
    const long = proveInvoicePayment(await recorded('long-memo-in-block'), { receiver: MERCHANT, amountSat: 70_000_000, memo: `inv_long_memo_${'x'.repeat(66)}` }, 1096)
    assert.deepEqual([long.pays, long.confirmations], [true, 1])
    const utf8 = proveInvoicePayment(await recorded('utf8-memo-eight-decimals'), { receiver: MERCHANT, amountSat: 12_345_678, memo: 'счёт_42 ☕' }, 1100)
    assert.deepEqual([utf8.outcome, utf8.pays, utf8.confirmations], ['exact', true, 3])
  })

  it('in the mempool, or back there after a re-org: no block, no confirmations, still paying', async () => {
    for (const name of ['long-memo-mempool', 'long-memo-reorged']) {
      const proof = proveInvoicePayment(await recorded(name), { receiver: MERCHANT, amountSat: 70_000_000, memo: `inv_long_memo_${'x'.repeat(66)}` }, 1096)
      assert.deepEqual([proof.inBlock, proof.height, proof.blockHash, proof.confirmations, proof.pays], [false, undefined, undefined, 0, true], name)
    }
  })
})

describe('the proof\'s rules', () => {
  const expectation = { receiver: MERCHANT, amountSat: 30_000_000, memo: 'inv_float' }

  it('adds several outputs to the receiver in satoshi: 0.1 + 0.2 PKOIN pays 0.3 exactly', () => {
    const tx = payment([[MERCHANT, 10_000_000], [MERCHANT, 20_000_000]], ['inv_float'], { height: 10 })
    const proof = proveInvoicePayment(tx, expectation, 10)
    assert.deepEqual([proof.receivedSat, proof.outcome, proof.pays], [30_000_000, 'exact', true])
  })

  it('is short by one satoshi when one satoshi is missing', () => {
    const proof = proveInvoicePayment(payment([[MERCHANT, 29_999_999]], ['inv_float']), expectation, 10)
    assert.deepEqual([proof.outcome, proof.shortSat, proof.pays], ['underpaid', 1, false])
  })

  it('counts an output only when the receiver is its one address', () => {
    const tx = payment([[MERCHANT, 30_000_000]], ['inv_float'])
    tx.outputs[0] = { ...tx.outputs[0] as ChainTransaction['outputs'][number], addresses: [MERCHANT, MINER] }
    assert.equal(proveInvoicePayment(tx, expectation, 10).receivedSat, 0)
  })

  it('nets what the receiver spent: paying itself with a memo is not a payment', () => {
    const tx = payment([[MERCHANT, 40_000_000]], ['inv_float'], { from: MERCHANT, fromSat: 50_000_000 })
    assert.deepEqual([proveInvoicePayment(tx, expectation, 10).receivedSat, proveInvoicePayment(tx, expectation, 10).fromReceiver], [0, true])
  })

  it('reads no memo from two OP_RETURN outputs, nor a memo differing by case or spacing', () => {
    assert.equal(proveInvoicePayment(payment([[MERCHANT, 30_000_000]], ['inv_float', 'inv_float']), expectation, 10).memoMatches, false)
    assert.equal(proveInvoicePayment(payment([[MERCHANT, 30_000_000]], ['INV_FLOAT']), expectation, 10).memoMatches, false)
    assert.equal(proveInvoicePayment(payment([[MERCHANT, 30_000_000]], ['inv_float ']), expectation, 10).memoMatches, false)
    const noMemo = proveInvoicePayment(payment([[MERCHANT, 30_000_000]], []), expectation, 10)
    assert.deepEqual([noMemo.memo, noMemo.memoMatches, noMemo.pays], [undefined, false, false])
  })

  it('counts confirmations from the tip, at least 1 in a block whose tip was read before it', () => {
    const tx = payment([[MERCHANT, 30_000_000]], ['inv_float'], { height: 100 })
    assert.equal(proveInvoicePayment(tx, expectation, 100).confirmations, 1)
    assert.equal(proveInvoicePayment(tx, expectation, 105).confirmations, 6)
    assert.equal(proveInvoicePayment(tx, expectation, 99).confirmations, 1)
  })

  it('refuses an expectation it cannot check against', () => {
    const tx = payment([[MERCHANT, 30_000_000]], ['inv_float'])
    for (const bad of [
      { ...expectation, receiver: '' },
      { ...expectation, amountSat: 0 },
      { ...expectation, amountSat: 0.5 },
      { ...expectation, amountSat: Number.MAX_SAFE_INTEGER + 1 },
      { ...expectation, memo: '' },
      { ...expectation, memo: 'x'.repeat(81) },
    ]) assert.throws(() => proveInvoicePayment(tx, bad, 10), { code: 'PAYMENT_ERR_EXPECTATION' }, JSON.stringify(bad))
    assert.throws(() => proveInvoicePayment(tx, expectation, -1), { code: 'PAYMENT_ERR_EXPECTATION' })
    assert.throws(() => proveInvoicePayment(tx, expectation, 1.5), { code: 'PAYMENT_ERR_EXPECTATION' })
  })
})
