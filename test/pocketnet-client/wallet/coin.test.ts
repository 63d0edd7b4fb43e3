import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { coinsOfUnspent, feeRateOf } from '../../../packages/pocketnet-client/index.js'
import { ALICE_UNSPENT } from './vectors.js'

describe('coinsOfUnspent', () => {
  it('reads a real txunspent answer, counting confirmations as the rest of the code does (the node says one less)', () => {
    assert.deepEqual(coinsOfUnspent(ALICE_UNSPENT)[0], {
      txid: ALICE_UNSPENT[0]!.txid, vout: 8, address: ALICE_UNSPENT[0]!.address, amountSat: 19999999, confirmations: 76, height: 1022, coinbase: false, pocketTx: true,
    })
    assert.deepEqual(coinsOfUnspent([]), [])
  })

  it('refuses the whole answer for one malformed entry, naming it', () => {
    const good = ALICE_UNSPENT[0]!
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, txid: 'AB' }, /entry 0: txid/],
      [{ ...good, vout: -1 }, /vout/],
      [{ ...good, amountSat: 1.5 }, /amountSat/],
      [{ ...good, amountSat: '1' }, /amountSat/],
      [{ ...good, amount: 0.2 }, /disagree/],
      [{ ...good, confirmations: null }, /confirmations/],
      [{ ...good, height: 'x' }, /height/],
      [{ ...good, height: undefined }, /height/],
      [{ ...good, coinbase: 'no' }, /coinbase/],
      [{ ...good, pockettx: 1 }, /pockettx/],
      [{ ...good, address: '' }, /address/],
      [null, /not an object/],
    ]
    for (const [entry, message] of cases) assert.throws(() => coinsOfUnspent([entry]), { code: 'WALLET_ERR_UNSPENT', message })
    assert.throws(() => coinsOfUnspent([good, good]), { code: 'WALLET_ERR_UNSPENT', message: /listed twice/ })
    assert.throws(() => coinsOfUnspent({}), { code: 'WALLET_ERR_UNSPENT' })
  })
})

describe('feeRateOf', () => {
  it('rounds the node\'s PKOIN/kB up to whole sat/kB, at least the floor', () => {
    // What the regtest node answered: far below its minimum relay fee.
    assert.equal(feeRateOf({ feerate: 0.00000007, blocks: 2 }, 1000), 1000)
    assert.equal(feeRateOf({ feerate: 0.00000007, blocks: 2 }, 0), 7)
    assert.equal(feeRateOf({ feerate: 0.00001234, blocks: 2 }), 1234)
    assert.equal(feeRateOf({ feerate: 0.000012345, blocks: 2 }), 1235)
    assert.equal(feeRateOf({ feerate: 0.001, blocks: 2 }, 1000), 100_000)
  })

  it('is the floor when the node has no estimate', () => {
    assert.equal(feeRateOf({ errors: ['Insufficient data or no feerate found'], blocks: 0 }, 2000), 2000)
  })

  it('refuses what is no answer', () => {
    assert.throws(() => feeRateOf(null), { code: 'WALLET_ERR_FEE_ESTIMATE' })
    assert.throws(() => feeRateOf({ blocks: 2 }), { code: 'WALLET_ERR_FEE_ESTIMATE' })
    assert.throws(() => feeRateOf({ feerate: -1 }), { code: 'WALLET_ERR_FEE_ESTIMATE' })
    assert.throws(() => feeRateOf({ feerate: '0.0001' }), { code: 'WALLET_ERR_FEE_ESTIMATE' })
    assert.throws(() => feeRateOf({ feerate: 0.0001 }, 1.5), { code: 'WALLET_ERR_FEE_RATE' })
  })
})
