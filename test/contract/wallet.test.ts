/**
 * The wallet primitives (packages/pocketnet-client/wallet/) against the real node: payments from a
 * dataset account (zoe, a throwaway regtest key) built and signed by our code, read back by the
 * node's own decoderawtransaction, judged by testmempoolaccept, sent on the public write path and
 * confirmed by staking. Each rule the builder enforces (dust, memo size, minimum relay fee) is
 * shown here to be the node's: the bytes one step past it, made by hand, are refused by the node.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  addressOfScript,
  buildPayment,
  coinsOfUnspent,
  decodeTransaction,
  DUST_THRESHOLD_SAT,
  encodeTransactionHex,
  feeRateOf,
  FINAL_SEQUENCE,
  memoScript,
  MIN_RELAY_FEE_SAT_PER_KB,
  p2pkhScript,
  pkoinToSatoshi,
  PocketNetProxyApi,
  signP2pkhInputs,
  walletKeyFromWif,
  type BroadcastError,
  type BuiltPayment,
  type Coin,
  type TransactionOutput,
} from '../../packages/pocketnet-client/index.js'
import { contractNode, privateRpc, publicRpc, stakeBlock, walletAddress } from './contract-node.js'

const zoe = contractNode.dataset.accounts.find(account => account.name === 'zoe')
if (zoe === undefined) throw new Error('the dataset has no account zoe')
const key = walletKeyFromWif(zoe.privkey, 'regtest')

/** The node's clock is the machine's: the nTime a caller would inject. */
const nowSeconds = (): number => Math.floor(Date.now() / 1000)

async function coins (): Promise<Coin[]> {
  const answer = await publicRpc('txunspent', [[key.address]])
  assert.equal(answer.error, null)
  return coinsOfUnspent(answer.result)
}

async function feeRate (): Promise<number> {
  const answer = await publicRpc('estimatesmartfee', [2])
  return feeRateOf(answer.result, MIN_RELAY_FEE_SAT_PER_KB)
}

async function mempoolVerdict (hex: string): Promise<{ allowed: boolean, 'reject-reason'?: string, vsize?: number, fees?: { base: number } }> {
  const [verdict] = await privateRpc('testmempoolaccept', [[hex]]) as [{ allowed: boolean }]
  return verdict
}

/** A transaction spending `coin` to `outputs`, signed by zoe, with none of buildPayment's checks: to show where the node's limits are. */
function handMade (coin: Coin, outputs: TransactionOutput[], nTime = nowSeconds()): string {
  return encodeTransactionHex(signP2pkhInputs({ version: 2, nTime, inputs: [{ txid: coin.txid, vout: coin.vout, scriptSig: new Uint8Array(0), sequence: FINAL_SEQUENCE }], outputs, lockTime: 0 }, key))
}

/**
 * A payment of 100,000 sat from `coin` to `to` whose fee is `feeOfSize` of its own size in bytes: a DER
 * signature is 70 to 72 bytes, so the size is only known once signed, and each fee gives other
 * signatures; the sizes a one-input, two-output transaction can have are tried, at one nTime after
 * another (each gives other signatures), until one fits.
 */
function sizedByFee (coin: Coin, to: string, feeOfSize: (bytes: number) => number): string {
  for (let second = 0; second < 100; second++) {
    for (const size of [230, 229, 228]) {
      const hex = handMade(coin, [pay(to, 100_000), pay(key.address, coin.amountSat - 100_000 - feeOfSize(size))], nowSeconds() - second)
      if (hex.length / 2 === size) return hex
    }
  }
  throw new Error('no size fitted the fee')
}

const pay = (address: string, amountSat: number): TransactionOutput => ({ amountSat, scriptPubKey: p2pkhScript(address, 'regtest') })

async function receivedSat (address: string, txid: string): Promise<number> {
  const answer = await publicRpc('txunspent', [[address]])
  return coinsOfUnspent(answer.result).filter(coin => coin.txid === txid).reduce((sum, coin) => sum + coin.amountSat, 0)
}

describe('wallet primitives on the real node', () => {
  let api: PocketNetProxyApi
  let receiver: string
  before(async () => {
    api = await PocketNetProxyApi.create({ nodes: [contractNode.url], network: 'regtest' })
    receiver = await walletAddress()
  })
  after(() => api.close())

  it('a payment with a memo and change: the node decodes what we encoded, takes it, answers our txid', async () => {
    const payment = buildPayment(key, { coins: await coins(), outputs: [{ address: receiver, amountSat: 12_345_678 }], memo: 'payout café #1', feeRateSatPerKb: await feeRate(), nTime: nowSeconds() })
    const decoded = await privateRpc('decoderawtransaction', [payment.hex]) as { txid: string, version: number, nTime: number, locktime: number, size: number, vin: Array<{ txid: string, vout: number, sequence: number }>, vout: Array<{ value: number, n: number, scriptPubKey: { hex: string, type: string, addresses?: string[] } }> }
    const ours = decodeTransaction(payment.hex)
    assert.equal(decoded.txid, payment.txid)
    assert.deepEqual([decoded.version, decoded.nTime, decoded.locktime, decoded.size], [ours.version, ours.nTime, ours.lockTime, payment.vsize])
    assert.deepEqual(decoded.vin.map(input => [input.txid, input.vout, input.sequence]), ours.inputs.map(input => [input.txid, input.vout, input.sequence]))
    assert.deepEqual(decoded.vout.map(output => [pkoinToSatoshi(output.value), output.scriptPubKey.hex]), ours.outputs.map(output => [output.amountSat, Buffer.from(output.scriptPubKey).toString('hex')]))
    assert.deepEqual(decoded.vout.map(output => output.scriptPubKey.addresses?.[0] ?? output.scriptPubKey.type), [receiver, 'nulldata', key.address])
    assert.equal(decoded.vout[1]?.scriptPubKey.hex, `6a${Buffer.from([Buffer.byteLength('payout café #1')]).toString('hex')}${Buffer.from('payout café #1').toString('hex')}`)
    assert.equal(payment.changeSat, payment.spent.reduce((sum, coin) => sum + coin.amountSat, 0) - 12_345_678 - payment.feeSat)

    const verdict = await mempoolVerdict(payment.hex)
    assert.deepEqual([verdict.allowed, verdict.vsize, pkoinToSatoshi(verdict.fees?.base ?? -1)], [true, payment.vsize, payment.feeSat])

    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: false })
    // The same bytes again, while in the mempool: the same answer.
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: false })
    // The spent coins leave txunspent at once; the change is listed only once confirmed.
    const listed = await coins()
    assert.ok(!listed.some(coin => payment.spent.some(spent => spent.txid === coin.txid && spent.vout === coin.vout)))
    assert.ok(!listed.some(coin => coin.txid === payment.txid))

    // Another transaction spending the same coin: the mempool's conflict.
    const rival = handMade(payment.spent[0] as Coin, [pay(receiver, 1_000_000), pay(key.address, (payment.spent[0] as Coin).amountSat - 1_000_000 - 1_000)])
    await assert.rejects(api.broadcastTransaction(rival), (err: BroadcastError) => err.code === 'BROADCAST_ERR_CONFLICT' && err.rpcCode === -26 && err.rpcMessage === 'txn-mempool-conflict')

    const height = await stakeBlock()
    const onChain = await publicRpc('getrawtransaction', [payment.txid])
    assert.deepEqual([onChain.result.txid, onChain.result.height, onChain.result.nTime], [payment.txid, height, ours.nTime])
    assert.equal(await receivedSat(receiver, payment.txid), 12_345_678)
    assert.equal(await receivedSat(key.address, payment.txid), payment.changeSat)

    // Sent again once confirmed: the node says it has it, which is success.
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: true })
    await assert.rejects(api.broadcastTransaction(rival), (err: BroadcastError) => err.code === 'BROADCAST_ERR_INPUTS_SPENT' && err.rpcMessage === 'bad-txns-inputs-missingorspent')
  })

  it('a re-org: the disconnected payment is in no mempool; the same bytes sent again are taken and confirm in the new branch', async () => {
    const payment = buildPayment(key, { coins: await coins(), outputs: [{ address: receiver, amountSat: 3_000_000 }], feeRateSatPerKb: await feeRate(), nTime: nowSeconds() })
    await api.broadcastTransaction(payment.hex)
    const height = await stakeBlock()
    const block = await privateRpc('getbestblockhash') as string
    await privateRpc('invalidateblock', [block])
    // Other tests may leave transactions of their own in the mempool: only this one is looked for.
    assert.ok(!(await privateRpc('getrawmempool') as string[]).includes(payment.txid))
    // Sent on the write path with its (empty) payload, the same bytes go back into the mempool.
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: false })
    assert.ok((await privateRpc('getrawmempool') as string[]).includes(payment.txid))
    assert.equal(await stakeBlock(), height)
    const onChain = await publicRpc('getrawtransaction', [payment.txid])
    assert.equal(onChain.result.height, height)
    assert.notEqual(onChain.result.blockHash, block)
    assert.equal(await receivedSat(receiver, payment.txid), 3_000_000)
  })

  it('a coin in the tip block: the node counts 0 confirmations, a Coin 1, and it can be spent at once', async () => {
    const first = buildPayment(key, { coins: await coins(), outputs: [{ address: receiver, amountSat: 1_000_000 }], feeRateSatPerKb: await feeRate(), nTime: nowSeconds() })
    await api.broadcastTransaction(first.hex)
    const height = await stakeBlock()
    const listed = (await publicRpc('txunspent', [[key.address]])).result as Array<{ txid: string, confirmations: number, height: number }>
    assert.deepEqual(listed.filter(coin => coin.txid === first.txid).map(coin => [coin.height, coin.confirmations]), [[height, 0]])
    const change = (await coins()).find(coin => coin.txid === first.txid) as Coin
    assert.deepEqual([change.height, change.confirmations, change.amountSat], [height, 1, first.changeSat])
    const second = buildPayment(key, { coins: [change], outputs: [{ address: receiver, amountSat: 1_000_000 }], feeRateSatPerKb: await feeRate(), nTime: nowSeconds() })
    assert.equal((await mempoolVerdict(second.hex)).allowed, true)
  })

  it('several inputs: the largest coins first, as many as the amount and fee need', async () => {
    const available = await coins()
    const largest = Math.max(...available.map(coin => coin.amountSat))
    const payment = buildPayment(key, { coins: available, outputs: [{ address: receiver, amountSat: largest * 2 }], feeRateSatPerKb: await feeRate(), nTime: nowSeconds() })
    assert.equal(payment.spent.length, 3)
    assert.deepEqual((await mempoolVerdict(payment.hex)).allowed, true)
    assert.equal((await api.broadcastTransaction(payment.hex)).txid, payment.txid)
    await stakeBlock()
    assert.equal(await receivedSat(receiver, payment.txid), largest * 2)
  })

  it('the node\'s limits are the builder\'s: dust, memo size, one OP_RETURN, minimum relay fee', async () => {
    const coin = (await coins())[0] as Coin
    const rest = (sent: number, fee: number): TransactionOutput => pay(key.address, coin.amountSat - sent - fee)
    assert.equal((await mempoolVerdict(handMade(coin, [pay(receiver, DUST_THRESHOLD_SAT), rest(DUST_THRESHOLD_SAT, 1_000)]))).allowed, true)
    assert.equal((await mempoolVerdict(handMade(coin, [pay(receiver, DUST_THRESHOLD_SAT - 1), rest(DUST_THRESHOLD_SAT - 1, 1_000)])))['reject-reason'], 'dust')
    assert.throws(() => buildPayment(key, { coins: [coin], outputs: [{ address: receiver, amountSat: DUST_THRESHOLD_SAT - 1 }], feeRateSatPerKb: 1000, nTime: nowSeconds() }), { code: 'WALLET_ERR_AMOUNT' })

    assert.equal((await mempoolVerdict(handMade(coin, [pay(receiver, 100_000), { amountSat: 0, scriptPubKey: memoScript('x'.repeat(80)) }, rest(100_000, 1_000)]))).allowed, true)
    const memo81 = Uint8Array.of(0x6a, 0x4c, 81, ...new Uint8Array(81).fill(0x78))
    assert.equal((await mempoolVerdict(handMade(coin, [pay(receiver, 100_000), { amountSat: 0, scriptPubKey: memo81 }, rest(100_000, 1_000)])))['reject-reason'], 'scriptpubkey')
    assert.throws(() => buildPayment(key, { coins: [coin], outputs: [{ address: receiver, amountSat: 100_000 }], memo: 'x'.repeat(81), feeRateSatPerKb: 1000, nTime: nowSeconds() }), { code: 'WALLET_ERR_MEMO' })
    assert.equal((await mempoolVerdict(handMade(coin, [pay(receiver, 100_000), { amountSat: 0, scriptPubKey: memoScript('a') }, { amountSat: 0, scriptPubKey: memoScript('b') }, rest(100_000, 1_000)])))['reject-reason'], 'multi-op-return')

    // The minimum relay fee: 1,000 sat/kB, a fee of at least the size in bytes.
    const info = await privateRpc('getmempoolinfo') as { minrelaytxfee: number }
    assert.equal(pkoinToSatoshi(info.minrelaytxfee), MIN_RELAY_FEE_SAT_PER_KB)
    const atFloor = sizedByFee(coin, receiver, size => size)
    assert.equal((await mempoolVerdict(atFloor)).allowed, true)
    const below = sizedByFee(coin, receiver, size => size - 1)
    assert.equal((await mempoolVerdict(below))['reject-reason'], 'min relay fee not met')
    await assert.rejects(api.broadcastTransaction(below), (err: BroadcastError) => err.code === 'BROADCAST_ERR_REJECTED' && /^min relay fee not met/.test(err.rpcMessage ?? ''))
    // On the fresh chain the node estimates 7 sat/kB, below its own relay minimum: the floor is
    // what is paid then. Blocks of transactions paying the floor raise the estimate to about it.
    const estimateSat = pkoinToSatoshi((await publicRpc('estimatesmartfee', [2])).result.feerate)
    const rate = await feeRate()
    assert.ok(rate >= MIN_RELAY_FEE_SAT_PER_KB && rate >= estimateSat)
    if (estimateSat < MIN_RELAY_FEE_SAT_PER_KB) assert.equal(rate, MIN_RELAY_FEE_SAT_PER_KB)
  })

  it('nTime: the node takes 0, a past and a future time alike, and stakes a future one into a block', async () => {
    const [coin] = await coins() as [Coin]
    const outputs = [pay(receiver, 100_000), pay(key.address, coin.amountSat - 100_000 - 1_000)]
    for (const nTime of [0, 1_231_006_505, nowSeconds() + 86_400, 0xffffffff]) assert.equal((await mempoolVerdict(handMade(coin, outputs, nTime))).allowed, true, `nTime ${nTime}`)
    const future = handMade(coin, outputs, nowSeconds() + 3_600)
    const { txid } = await api.broadcastTransaction(future)
    const height = await stakeBlock()
    const onChain = await publicRpc('getrawtransaction', [txid])
    assert.equal(onChain.result.height, height)
    const block = await privateRpc('getblock', [onChain.result.blockHash]) as { time: number }
    assert.ok(block.time < decodeTransaction(future).nTime, 'the block is older than the transaction it holds')
  })

  it('refuses a payment the wallet cannot cover, saying how much is missing', async () => {
    const available = await coins()
    const total = available.reduce((sum, coin) => sum + coin.amountSat, 0)
    assert.throws(() => buildPayment(key, { coins: available, outputs: [{ address: receiver, amountSat: total }], feeRateSatPerKb: 1000, nTime: nowSeconds() }), { code: 'WALLET_ERR_FUNDS', message: /sat missing/ })
  })

  it('an input the node does not know: INPUTS_SPENT', async () => {
    const unknown: Coin = { txid: 'ab'.repeat(32), vout: 0, address: key.address, amountSat: 1_000_000, confirmations: 10, height: 1, coinbase: false, pocketTx: false }
    const built: BuiltPayment = buildPayment(key, { coins: [unknown], outputs: [{ address: receiver, amountSat: 100_000 }], feeRateSatPerKb: 1000, nTime: nowSeconds() })
    await assert.rejects(api.broadcastTransaction(built.hex), (err: BroadcastError) => err.code === 'BROADCAST_ERR_INPUTS_SPENT' && err.rpcCode === -32602)
    assert.equal(addressOfScript(decodeTransaction(built.hex).outputs[0]!.scriptPubKey, 'regtest'), receiver)
  })
})
