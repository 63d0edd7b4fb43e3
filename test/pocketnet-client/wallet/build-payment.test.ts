import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOfScript, buildPayment, coinsOfUnspent, decodeTransaction, DUST_THRESHOLD_SAT, walletKeyFromWif, type Coin } from '../../../packages/pocketnet-client/index.js'
import { ALICE, ALICE_UNSPENT, BOB, OURS } from './vectors.js'

const key = walletKeyFromWif(ALICE.wif, 'regtest')
const NOW = 1795939700

function coin (amountSat: number, vout: number, extra: Partial<Coin> = {}): Coin {
  return { txid: 'aa'.repeat(32), vout, address: ALICE.address, amountSat, confirmations: 20, height: 1000, coinbase: false, pocketTx: false, ...extra }
}

describe('buildPayment', () => {
  it('builds the very bytes the node accepted (deterministic signatures), with its fee and change', () => {
    const payment = buildPayment(key, { coins: coinsOfUnspent(ALICE_UNSPENT), outputs: [{ address: BOB, amountSat: 25_000_000 }], memo: 'payout #1 café', feeRateSatPerKb: 1000, nTime: NOW })
    assert.deepEqual([payment.hex, payment.txid, payment.feeSat, payment.changeSat, payment.vsize], [OURS.hex, OURS.txid, OURS.feeSat, OURS.changeSat, OURS.vsize])
    assert.equal(payment.spent.length, 2)
  })

  it('orders outputs receivers, memo, change, and spends largest first', () => {
    const payment = buildPayment(key, { coins: [coin(100_000, 0), coin(5_000_000, 1), coin(900_000, 2)], outputs: [{ address: BOB, amountSat: 1_000_000 }, { address: ALICE.address, amountSat: 2_000_000 }], memo: 'm', feeRateSatPerKb: 2000, nTime: NOW })
    assert.deepEqual(payment.spent.map(spent => spent.vout), [1])
    const tx = decodeTransaction(payment.hex)
    assert.deepEqual(tx.outputs.map(output => addressOfScript(output.scriptPubKey, 'regtest') ?? 'memo'), [BOB, ALICE.address, 'memo', ALICE.address])
    assert.equal(payment.feeSat + payment.changeSat + 3_000_000, 5_000_000)
    // The fee is for the largest signed size at the rate, rounded up: never below it.
    assert.ok(payment.feeSat >= Math.ceil(payment.vsize * 2))
    assert.equal(tx.nTime, NOW)
  })

  it('adds coins until the fee is covered, and sends change to the address given', () => {
    const payment = buildPayment(key, { coins: [coin(600_000, 0), coin(600_000, 1)], outputs: [{ address: BOB, amountSat: 600_000 }], feeRateSatPerKb: 1000, nTime: NOW, changeAddress: BOB })
    assert.equal(payment.spent.length, 2)
    assert.equal(addressOfScript(decodeTransaction(payment.hex).outputs[1]!.scriptPubKey, 'regtest'), BOB)
  })

  it('folds change below dust into the fee', () => {
    const fee = 226 // one input, two P2PKH outputs at 1000 sat/kB: 12 + 1 + 148 + 1 + 2 × 34 = 230 bytes bound, 226 with one output
    const payment = buildPayment(key, { coins: [coin(1_000_000 + fee + DUST_THRESHOLD_SAT - 1, 0)], outputs: [{ address: BOB, amountSat: 1_000_000 }], feeRateSatPerKb: 1000, nTime: NOW })
    assert.equal(payment.changeSat, 0)
    assert.equal(decodeTransaction(payment.hex).outputs.length, 1)
    assert.equal(payment.feeSat, fee + DUST_THRESHOLD_SAT - 1)
    const withChange = buildPayment(key, { coins: [coin(1_000_000 + 230 + DUST_THRESHOLD_SAT, 0)], outputs: [{ address: BOB, amountSat: 1_000_000 }], feeRateSatPerKb: 1000, nTime: NOW })
    assert.deepEqual([withChange.changeSat, withChange.feeSat], [DUST_THRESHOLD_SAT, 230])
  })

  it('spends only its own mature coins', () => {
    const coins = [
      coin(9_000_000, 0, { address: BOB }),
      coin(8_000_000, 1, { confirmations: 0 }),
      coin(7_000_000, 2, { pocketTx: true, confirmations: 9 }),
      coin(6_000_000, 3, { coinbase: true, confirmations: 99 }),
      coin(2_000_000, 4, { pocketTx: true, confirmations: 10 }),
      coin(1_000_000, 5, { coinbase: true, confirmations: 100 }),
    ]
    const payment = buildPayment(key, { coins, outputs: [{ address: BOB, amountSat: 2_500_000 }], feeRateSatPerKb: 1000, nTime: NOW })
    assert.deepEqual(payment.spent.map(spent => spent.vout), [4, 5])
    assert.throws(() => buildPayment(key, { coins, outputs: [{ address: BOB, amountSat: 2_500_000 }], feeRateSatPerKb: 1000, nTime: NOW, minConfirmations: 101 }), { code: 'WALLET_ERR_FUNDS' })
  })

  it('says how much is missing', () => {
    // 1 input, 1 output: 12 + 1 + 148 + 1 + 34 = 196 bytes, 196 sat at 1000 sat/kB.
    assert.throws(() => buildPayment(key, { coins: [coin(1_000_000, 0)], outputs: [{ address: BOB, amountSat: 1_000_000 }], feeRateSatPerKb: 1000, nTime: NOW }), { code: 'WALLET_ERR_FUNDS', message: /hold 1000000 sat; the payment needs 1000196 sat with its fee: 196 sat missing/ })
    assert.throws(() => buildPayment(key, { coins: [], outputs: [{ address: BOB, amountSat: 1_000 }], feeRateSatPerKb: 1000, nTime: NOW }), { code: 'WALLET_ERR_FUNDS', message: /0 spendable coins hold 0 sat/ })
  })

  it('refuses what the node would refuse, with a code each', () => {
    const coins = [coin(10_000_000, 0)]
    const base = { coins, outputs: [{ address: BOB, amountSat: 1_000_000 }], feeRateSatPerKb: 1000, nTime: NOW }
    assert.throws(() => buildPayment(key, { ...base, outputs: [{ address: BOB, amountSat: DUST_THRESHOLD_SAT - 1 }] }), { code: 'WALLET_ERR_AMOUNT', message: /dust threshold of 546 sat/ })
    assert.throws(() => buildPayment(key, { ...base, outputs: [{ address: BOB, amountSat: 1000.5 }] }), { code: 'WALLET_ERR_AMOUNT' })
    assert.throws(() => buildPayment(key, { ...base, outputs: [{ address: BOB, amountSat: Number.MAX_SAFE_INTEGER }, { address: BOB, amountSat: 10 ** 6 }] }), { code: 'WALLET_ERR_AMOUNT' })
    assert.throws(() => buildPayment(key, { ...base, memo: 'x'.repeat(81) }), { code: 'WALLET_ERR_MEMO', message: /1 to 80 bytes/ })
    assert.throws(() => buildPayment(key, { ...base, memo: 'é'.repeat(41) }), { code: 'WALLET_ERR_MEMO', message: /not 82/ })
    assert.throws(() => buildPayment(key, { ...base, memo: '' }), { code: 'WALLET_ERR_MEMO' })
    assert.equal(decodeTransaction(buildPayment(key, { ...base, memo: 'x'.repeat(80) }).hex).outputs[1]!.scriptPubKey.length, 83)
    assert.throws(() => buildPayment(key, { ...base, outputs: [] }), { code: 'WALLET_ERR_OUTPUTS' })
    assert.throws(() => buildPayment(key, { ...base, outputs: Array.from({ length: 101 }, () => ({ address: BOB, amountSat: 1000 })) }), { code: 'WALLET_ERR_OUTPUTS', message: /at most 100/ })
    assert.throws(() => buildPayment(key, { ...base, outputs: [{ address: 'PUy71ntJeRaF1NNNnFGrmC8NzkY6ruEcGq', amountSat: 1000 }] }), { code: 'WALLET_ERR_ADDRESS' })
    assert.throws(() => buildPayment(key, { ...base, changeAddress: 'nope' }), { code: 'WALLET_ERR_ADDRESS' })
    assert.throws(() => buildPayment(key, { ...base, feeRateSatPerKb: 999 }), { code: 'WALLET_ERR_FEE_RATE', message: /from 1000/ })
    assert.throws(() => buildPayment(key, { ...base, feeRateSatPerKb: 10_000_001 }), { code: 'WALLET_ERR_FEE_RATE' })
    assert.throws(() => buildPayment(key, { ...base, nTime: Date.now() }), { code: 'WALLET_ERR_TRANSACTION', message: /nTime/ })
  })
})
