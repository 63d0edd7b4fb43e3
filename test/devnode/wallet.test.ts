/**
 * The emulator's wallet side: txunspent, sendrawtransaction on the write path, estimatesmartfee,
 * the fund and fee-rate controls and the broadcast faults. Transactions are signed here by a signer
 * of the test's own (not the emulator's, not pocketnet-client's), and one signed by a real 0.22.7
 * regtest node is replayed, so the emulator's signature hash is held to the node's. Every refusal
 * expected is the code and text the real node answered (docs/pocketnet-node.md, "The wallet side");
 * test/contract/wallet-side.test.ts sends the same kinds of transactions to a real node.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { memoScript as memo, sign, testKey as keyOf, txidOf, unsigned as unsignedOf, type Pay } from '../helpers/pocketnet-signer.js'
import { startEmulator } from '../helpers/start-emulator.js'

type Answer = { status: number, result: any, error: { code: number, message: string } | null }

async function rpc (url: string, path: '/public/' | '/post/', method: string, params: unknown[]): Promise<Answer> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify({ method, params }) })
  const body = await response.json() as { result: unknown, error: Answer['error'] }
  return { status: response.status, result: body.result, error: body.error }
}

const send = (url: string, hex: string): Promise<Answer> => rpc(url, '/post/', 'sendrawtransaction', [hex, {}])
const refusal = (answer: Answer): [number, string] | undefined => answer.error === null ? undefined : [answer.error.code, answer.error.message]

const payer = keyOf('wallet test payer')
const receiver = keyOf('wallet test receiver')

/** Signed by a real 0.22.7 regtest node (signrawtransactionwithkey): a dataset key's output 8 of 24cfdc…, 0.19999999 PKOIN, to 0.1 and 0.0999 back. */
const NODE_SIGNED = {
  spent: { txid: '24cfdc12512da7a152a9adc6347c216db4432fb1c93723b51e1702e772bfe5ef', vout: 8, address: 'micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4', amount: 19_999_999 },
  hex: '020000002fdc0b6b01efe5bf72e702171eb52337c9b12f43b46d217c34c6ada952a1a72d5112dccf24080000006a473044022063c74d1dc968a3f5d777de3c36fd8675aea1acef86954e782f9a59321bc70ad0022051e5571623c1a3de66a52327bb4f97117e06435954c82a3eb8b7301f2218a0cd012103f59176ffee5e647ad49bf2e173a6c6c10209ef98d43194ee99b6f0c6f4d51159ffffffff0280969800000000001976a914cb3be402b955c83970debf9e91e2de3dbe0664be88ac706f9800000000001976a914220a76754ecd29581439d7b762a708f8385b69a788ac00000000',
  txid: '96ffd38c3b39b0c773508fede2d2e1b5bbb9a54871baacae0c756b8ec4b09e96',
}

describe('the emulator\'s wallet side', () => {
  it('accepts a transaction the real node signed, with the node\'s txid, and refuses it with a byte of its signature changed', async (t) => {
    const node = await startEmulator(t)
    const { spent } = NODE_SIGNED
    node.addTransaction({ txid: spent.txid, outputs: Array.from({ length: 9 }, (_, n) => ({ address: spent.address, amount: n === spent.vout ? spent.amount : 1_000 })) })
    node.mineBlock()
    const at = NODE_SIGNED.hex.indexOf('3044022063') + 20
    const forged = NODE_SIGNED.hex.slice(0, at) + (NODE_SIGNED.hex[at] === '0' ? '1' : '0') + NODE_SIGNED.hex.slice(at + 1)
    assert.deepEqual(refusal(await send(node.url, forged)), [-26, 'mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)'])
    const sent = await send(node.url, NODE_SIGNED.hex)
    assert.deepEqual([sent.status, sent.result, sent.error], [200, NODE_SIGNED.txid, null])
    const pending = (await rpc(node.url, '/public/', 'getrawtransaction', [NODE_SIGNED.txid])).result
    assert.deepEqual([pending.height, pending.nTime, pending.vin[0].value, pending.vout.map((o: any) => o.value)], [undefined, 1795939375, 0.19999999, [0.1, 0.0999]])
    assert.equal(pending.vout[0].scriptPubKey.hex, '76a914cb3be402b955c83970debf9e91e2de3dbe0664be88ac')
  })

  it('lists funded coins with txunspent as the node does, leaves out what the mempool spends, and lists a new output only once mined', async (t) => {
    const node = await startEmulator(t)
    const funded = node.fund(payer.address, 50_000_000)
    assert.equal(funded.height, node.height)
    const coins = (await rpc(node.url, '/public/', 'txunspent', [[payer.address, payer.address], 1, 9_999_999])).result
    assert.deepEqual(coins, [{ txid: funded.txid, vout: 0, address: payer.address, amount: 0.5, amountSat: 50_000_000, scriptPubKey: payer.script.toString('hex'), coinbase: false, pockettx: false, confirmations: 0, height: funded.height }])
    assert.deepEqual(Object.keys(coins[0] as object), ['txid', 'vout', 'address', 'amount', 'amountSat', 'scriptPubKey', 'coinbase', 'pockettx', 'confirmations', 'height'])

    const hex = sign([{ ...funded, key: payer }], [{ script: receiver.script, sat: 20_000_000 }, { script: memo('inv_1'), sat: 0 }, { script: payer.script, sat: 29_990_000 }])
    assert.equal((await send(node.url, hex)).result, txidOf(hex))
    // Again, the same bytes: the txid once more, nothing new.
    assert.equal((await send(node.url, hex)).result, txidOf(hex))
    assert.equal(node.chain.pendingTransactions.length, 1)
    assert.deepEqual((await rpc(node.url, '/public/', 'txunspent', [[payer.address]])).result, [])
    assert.deepEqual((await rpc(node.url, '/public/', 'txunspent', [[receiver.address]])).result, [])

    node.mineBlock()
    node.mineBlock()
    const received = (await rpc(node.url, '/public/', 'txunspent', [[receiver.address, payer.address]])).result
    assert.deepEqual(received.map((coin: any) => [coin.address, coin.vout, coin.amountSat, coin.confirmations, coin.height]), [[receiver.address, 0, 20_000_000, 1, node.height - 1], [payer.address, 2, 29_990_000, 1, node.height - 1]])
    assert.deepEqual(refusal(await send(node.url, hex)), [-27, 'transaction already in block chain'])
  })

  it('refuses what the node refuses, with its code and text', async (t) => {
    const node = await startEmulator(t)
    const coin = node.fund(payer.address, 20_000_000)
    const spend = [{ ...coin, key: payer }]
    const paying = (sat: number, change?: number): Pay[] => [{ script: receiver.script, sat }, ...(change === undefined ? [] : [{ script: payer.script, sat: change }])]
    const cases: Array<[string, string, [number, string]]> = [
      ['bad hex', 'zz', [-22, 'TX decode failed']],
      ['an unknown first input', sign([{ txid: '11'.repeat(32), vout: 0, key: payer }], paying(1_000_000)), [-32602, 'Invalid address']],
      ['an output past the last', sign([{ ...coin, vout: 5, key: payer }], paying(1_000_000)), [-32602, 'Invalid address']],
      ['dust', sign(spend, paying(545, 19_990_000)), [-26, 'dust']],
      ['more out than in', sign(spend, paying(30_000_000)), [-26, 'bad-txns-in-belowout, value in (0.20) < value out (0.30)']],
      ['a missing second input', sign([...spend, { txid: '22'.repeat(32), vout: 0, key: payer }], paying(1_000_000)), [-26, 'bad-txns-inputs-missingorspent']],
      ['the wrong key', sign([{ ...coin, key: receiver }], paying(1_000_000, 18_990_000)), [-26, 'mandatory-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)']],
    ]
    // The minimum relay fee is 1,000 satoshi per 1,000 bytes: one a byte.
    const cheap = sign(spend, paying(19_999_901))
    cases.push(['a fee of 99', cheap, [-26, `min relay fee not met, 99 < ${cheap.length / 2}`]])
    const twoMemos = [{ script: receiver.script, sat: 1_000_000 }, { script: memo('a'), sat: 0 }, { script: memo('b'), sat: 0 }]
    cases.push(
      ['version 3', sign(spend, paying(1_000_000, 18_990_000), { version: 3 }), [-26, 'version']],
      ['two OP_RETURN outputs', sign(spend, twoMemos), [-26, 'multi-op-return']],
      ['a high S', sign(spend, paying(1_000_000, 18_990_000), { highS: true }), [-26, 'non-mandatory-script-verify-flag (Non-canonical signature: S value is unnecessarily high)']],
      ['an extra push', sign(spend, paying(1_000_000, 18_990_000), { extraPush: true }), [-26, 'non-mandatory-script-verify-flag (Stack size must be exactly one after execution)']]
    )
    for (const [name, hex, expected] of cases) {
      const answer = await send(node.url, hex)
      assert.deepEqual([answer.status, refusal(answer)], [500, expected], name)
    }
    const unsigned = unsignedOf(spend, paying(1_000_000, 18_990_000))
    assert.deepEqual(refusal(await send(node.url, unsigned)), [-26, 'mandatory-script-verify-flag-failed (Operation not valid with the current stack size)'])
    // The params as the node checks them, and the read path, which has no write method.
    assert.deepEqual(refusal(await rpc(node.url, '/post/', 'sendrawtransaction', [])), [-32603, 'JSON value is not a string as expected'])
    assert.deepEqual(refusal(await rpc(node.url, '/post/', 'sendrawtransaction', [1, {}])), [-3, 'Expected type string, got number'])
    assert.deepEqual(refusal(await rpc(node.url, '/post/', 'sendrawtransaction', ['00', 'x'])), [-3, 'Expected type object, got string'])
    const badAddresses: Array<[unknown[], [number, string]]> = [
      [['x'], [-3, 'Expected type array, got string']],
      [[[]], [-5, 'Invalid Pocketcoin addresses']],
      [[['Pxxx']], [-5, 'Invalid Pocketcoin address: Pxxx']],
      [[[1]], [-32603, 'JSON value is not a string as expected']],
    ]
    for (const [params, expected] of badAddresses) {
      assert.deepEqual(refusal(await rpc(node.url, '/public/', 'txunspent', params)), expected, JSON.stringify(params))
    }
    const onRead = await rpc(node.url, '/public/', 'sendrawtransaction', [sign(spend, paying(1_000_000, 18_990_000)), {}])
    assert.deepEqual([onRead.status, refusal(onRead)], [404, [-32601, 'Method not found']])
    assert.equal(node.chain.pendingTransactions.length, 0)

    // A conflicting spend of a coin the mempool spends; then the spent coin, once mined, is missing.
    assert.equal((await send(node.url, sign(spend, paying(1_000_000, 18_990_000)))).error, null)
    assert.deepEqual(refusal(await send(node.url, sign(spend, paying(2_000_000, 17_990_000)))), [-26, 'txn-mempool-conflict'])
    node.mineBlock()
    assert.deepEqual(refusal(await send(node.url, sign(spend, paying(2_000_000, 17_990_000)))), [-26, 'bad-txns-inputs-missingorspent'])
  })

  it('leaves a disconnected block\'s transaction out of the mempool and its spent coin out of txunspent, takes the same bytes again, and mines them', async (t) => {
    const node = await startEmulator(t)
    const coin = node.fund(payer.address, 20_000_000)
    node.mineBlock()
    const hex = sign([{ ...coin, key: payer }], [{ script: receiver.script, sat: 10_000_000 }, { script: payer.script, sat: 9_990_000 }])
    await send(node.url, hex)
    node.mineBlock()
    node.disconnectBlock()
    assert.equal(node.chain.pendingTransactions.length, 0)
    assert.deepEqual((await rpc(node.url, '/public/', 'txunspent', [[payer.address, receiver.address]])).result, [])
    assert.equal((await send(node.url, hex)).result, txidOf(hex))
    assert.deepEqual(node.chain.pendingTransactions.map(each => each.txid), [txidOf(hex)])
    node.mineBlock()
    const mined = (await rpc(node.url, '/public/', 'getrawtransaction', [txidOf(hex)])).result
    assert.equal(mined.height, node.height)
  })

  it('takes a spend of a mempool output, under each name of the write path, and mines parent and child in order', async (t) => {
    const node = await startEmulator(t)
    const coin = node.fund(payer.address, 20_000_000)
    const parent = sign([{ ...coin, key: payer }], [{ script: receiver.script, sat: 10_000_000 }, { script: payer.script, sat: 9_990_000 }])
    assert.equal((await rpc(node.url, '/post/', 'addtransaction', [parent, {}])).result, txidOf(parent))
    const child = sign([{ txid: txidOf(parent), vout: 1, key: payer }], [{ script: receiver.script, sat: 9_980_000 }])
    assert.equal((await rpc(node.url, '/post/', 'sendrawtransactionwithmessage', [child, {}])).result, txidOf(child))
    node.mineBlock()
    assert.deepEqual(node.chain.tip.transactions.map(each => each.txid), [txidOf(parent), txidOf(child)])
    const coins = (await rpc(node.url, '/public/', 'txunspent', [[receiver.address, payer.address]])).result
    assert.deepEqual(coins.map((each: any) => [each.txid, each.vout, each.amountSat]), [[txidOf(parent), 0, 10_000_000], [txidOf(child), 0, 9_980_000]])
  })

  it('lets another transaction spend a coin a dropped one spent, and lets go of a mempool copy when the old block comes back', async (t) => {
    const node = await startEmulator(t)
    const [first, second] = [node.fund(payer.address, 20_000_000), node.fund(payer.address, 30_000_000)]
    const dropped = sign([{ ...first, key: payer }], [{ script: receiver.script, sat: 19_990_000 }])
    const back = sign([{ ...second, key: payer }], [{ script: receiver.script, sat: 29_990_000 }])
    await send(node.url, dropped)
    await send(node.url, back)
    node.mineBlock()
    node.disconnectBlock()
    const other = sign([{ ...first, key: payer }], [{ script: payer.script, sat: 19_980_000 }])
    assert.equal((await send(node.url, other)).result, txidOf(other))
    assert.equal((await send(node.url, back)).result, txidOf(back))
    node.reconnectBlock()
    // The old block holds `back` and `dropped`, which spends what `other` spends: both leave the mempool.
    assert.deepEqual(node.chain.pendingTransactions, [])
    assert.deepEqual(refusal(await send(node.url, back)), [-27, 'transaction already in block chain'])
  })

  it('answers estimatesmartfee with the rate set, the node\'s errors answer without one, and the node\'s param errors', async (t) => {
    const node = await startEmulator(t, { feeRatePerKb: 7, controls: true })
    assert.deepEqual((await rpc(node.url, '/public/', 'estimatesmartfee', [1])).result, { feerate: 0.00000007, blocks: 2 })
    assert.deepEqual((await rpc(node.url, '/public/', 'estimatesmartfee', [6, 'ECONOMICAL'])).result, { feerate: 0.00000007, blocks: 6 })
    const response = await fetch(`${node.url}/devnode/feerate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ satPerKb: null }) })
    assert.deepEqual([response.status, await response.json()], [200, { satPerKb: null }])
    assert.deepEqual((await rpc(node.url, '/public/', 'estimatesmartfee', [2])).result, { errors: ['Insufficient data or no feerate found'], blocks: 0 })
    node.setFeeRate(2_500)
    assert.deepEqual((await rpc(node.url, '/public/', 'estimatesmartfee', [3])).result, { feerate: 0.000025, blocks: 3 })
    const refused: Array<[unknown[], [number, string]]> = [
      [[0], [-8, 'Invalid conf_target, must be between 1 and 1008']],
      [[1009], [-8, 'Invalid conf_target, must be between 1 and 1008']],
      [['2'], [-3, 'Expected type number, got string']],
      [[2.5], [-32603, 'JSON integer out of range']],
      [[2, 'bad'], [-8, 'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"']],
    ]
    for (const [params, expected] of refused) assert.deepEqual(refusal(await rpc(node.url, '/public/', 'estimatesmartfee', params)), expected, JSON.stringify(params))
  })

  it('funds an address through the controls, and refuses a bad order', async (t) => {
    const node = await startEmulator(t, { controls: true })
    const fund = async (body: unknown): Promise<[number, any]> => {
      const response = await fetch(`${node.url}/devnode/fund`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return [response.status, await response.json()]
    }
    const [status, funded] = await fund({ address: payer.address, amountSat: 1_000_000 })
    assert.deepEqual([status, funded.vout, funded.amountSat, funded.height], [200, 0, 1_000_000, node.height])
    assert.equal((await rpc(node.url, '/public/', 'txunspent', [[payer.address]])).result[0].txid, funded.txid)
    assert.equal((await fund({ address: payer.address, amountSat: 0 }))[1].error.code, 'INVALID_AMOUNT')
    assert.equal((await fund({ address: 'mz3ZDGjU4bwpa8tcvKYsv1nMpHEBkGmXWw', amountSat: 1 }))[1].error.code, 'INVALID_ADDRESS')
  })

  it('loses a broadcast when told (the txid answered, the transaction kept nowhere), and carries one out without answering', async (t) => {
    const node = await startEmulator(t)
    const coin = node.fund(payer.address, 20_000_000)
    const hex = sign([{ ...coin, key: payer }], [{ script: receiver.script, sat: 10_000_000 }, { script: payer.script, sat: 9_990_000 }])
    node.setFault({ kind: 'lose-broadcast' }, { method: 'sendrawtransaction', times: 1 })
    assert.equal((await send(node.url, hex)).result, txidOf(hex))
    node.mineBlock()
    assert.equal((await rpc(node.url, '/public/', 'getrawtransaction', [txidOf(hex)])).error?.code, -32603)
    assert.equal((await rpc(node.url, '/public/', 'txunspent', [[payer.address]])).result.length, 1)

    node.setFault({ kind: 'drop-after-accept' }, { method: 'sendrawtransaction', times: 1 })
    await assert.rejects(send(node.url, hex))
    assert.deepEqual(node.chain.pendingTransactions.map(each => each.txid), [txidOf(hex)])
    assert.equal((await send(node.url, hex)).result, txidOf(hex))
  })
})
