/**
 * The wallet primitives against the node emulator (devnode/), offline: what the lead's payouts and
 * the demo run on without a real node. The emulator checks signatures with its own code, so this
 * is a second, independent reading of our bytes (test/contract/wallet.test.ts is the real node's).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sha256 } from '@noble/hashes/sha2.js'
import { buildPayment, coinsOfUnspent, feeRateOf, keyOfSecret, MIN_RELAY_FEE_SAT_PER_KB, PocketNetProxyApi, type BroadcastError } from '../../../packages/pocketnet-client/index.js'
import { startEmulator } from '../../helpers/start-emulator.js'

const wallet = keyOfSecret(sha256(new TextEncoder().encode('pocketnet-client wallet test')), 'main')
const receiver = keyOfSecret(sha256(new TextEncoder().encode('pocketnet-client wallet receiver')), 'main')
const NOW_S = 1_795_939_700

describe('the wallet primitives on the emulator', () => {
  it('builds from its txunspent and fee estimate, broadcasts, conflicts, confirms, and is told "already in block chain" after', async (t) => {
    const node = await startEmulator(t)
    node.fund(wallet.address, 30_000_000)
    node.fund(wallet.address, 20_000_000)
    const api = await PocketNetProxyApi.create({ nodes: [node.url] })
    t.after(() => api.close())

    const coins = coinsOfUnspent(await api.callRaw('txunspent', [[wallet.address]], { fresh: true }))
    assert.deepEqual(coins.map(coin => coin.amountSat).sort(), [20_000_000, 30_000_000])
    const feeRateSatPerKb = feeRateOf(await api.callRaw('estimatesmartfee', [2], { fresh: true }), MIN_RELAY_FEE_SAT_PER_KB)
    assert.equal(feeRateSatPerKb, MIN_RELAY_FEE_SAT_PER_KB)

    const payment = buildPayment(wallet, { coins, outputs: [{ address: receiver.address, amountSat: 40_000_000 }], memo: 'payout 1', feeRateSatPerKb, nTime: NOW_S })
    assert.equal(payment.spent.length, 2)
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: false })
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: false })

    const rival = buildPayment(wallet, { coins: payment.spent.slice(0, 1), outputs: [{ address: receiver.address, amountSat: 1_000_000 }], feeRateSatPerKb, nTime: NOW_S })
    await assert.rejects(api.broadcastTransaction(rival.hex), (err: BroadcastError) => err.code === 'BROADCAST_ERR_CONFLICT')

    node.mineBlock()
    const received = coinsOfUnspent(await api.callRaw('txunspent', [[receiver.address]], { fresh: true }))
    assert.deepEqual(received.map(coin => [coin.txid, coin.amountSat, coin.confirmations]), [[payment.txid, 40_000_000, 1]])
    assert.deepEqual(await api.broadcastTransaction(payment.hex), { txid: payment.txid, alreadyConfirmed: true })
    await assert.rejects(api.broadcastTransaction(rival.hex), (err: BroadcastError) => err.code === 'BROADCAST_ERR_INPUTS_SPENT')
  })
})
