import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_FLOAT_PKOIN, formatPkoin, isSatoshi, pkoinToSatoshi, satoshiFromString, satoshiToPkoinNumber } from '../../../packages/pocketnet-client/payments/satoshi.js'

describe('PKOIN floats to integer satoshi', () => {
  it('reads the node\'s floats exactly, where multiplying by 1e8 would not', () => {
    assert.equal(1.15 * 1e8, 114_999_999.99999999)
    assert.equal(pkoinToSatoshi(1.15), 115_000_000)
    assert.equal(pkoinToSatoshi(48.499), 4_849_900_000)
    assert.equal(pkoinToSatoshi(49.87554322), 4_987_554_322)
    assert.equal(pkoinToSatoshi(0.12345678), 12_345_678)
    assert.equal(pkoinToSatoshi(1e-8), 1)
    assert.equal(pkoinToSatoshi(1.5e-7), 15)
    assert.equal(pkoinToSatoshi(21e6), 2_100_000_000_000_000)
    assert.equal(pkoinToSatoshi(0), 0)
    assert.equal(pkoinToSatoshi(50), 5_000_000_000)
  })

  it('adds 0.1 and 0.2 PKOIN as satoshi, and refuses the float sum, which is not whole satoshi', () => {
    assert.equal(pkoinToSatoshi(0.1) + pkoinToSatoshi(0.2), pkoinToSatoshi(0.3))
    assert.equal(pkoinToSatoshi(0.1) + pkoinToSatoshi(0.2), 30_000_000)
    assert.equal(0.1 + 0.2, 0.30000000000000004)
    assert.throws(() => pkoinToSatoshi(0.1 + 0.2), { code: 'PAYMENT_ERR_AMOUNT', message: /more than 8 decimals/ })
  })

  it('refuses fractions of a satoshi, negatives, non-numbers and floats too large to be exact', () => {
    for (const bad of [1e-9, 0.000000015, -1, Number.NaN, Infinity, MAX_FLOAT_PKOIN, 1e21]) {
      assert.throws(() => pkoinToSatoshi(bad), { code: 'PAYMENT_ERR_AMOUNT' }, String(bad))
    }
    assert.equal(pkoinToSatoshi(MAX_FLOAT_PKOIN - 1e-8 * 4), 3_355_443_199_999_996)
  })

  it('reads decimal text, with zeros past the 8th decimal allowed and nothing else', () => {
    assert.equal(pkoinToSatoshi('1.5'), 150_000_000)
    assert.equal(pkoinToSatoshi('0.00000001'), 1)
    assert.equal(pkoinToSatoshi('0.000000010'), 1)
    assert.equal(pkoinToSatoshi('2'), 200_000_000)
    assert.equal(pkoinToSatoshi('90071992.54740991'), Number.MAX_SAFE_INTEGER)
    for (const bad of ['0.000000001', '1e-8', '-1', '1.', '.5', ' 1', '0x10', '', '90071992.54740992']) {
      assert.throws(() => pkoinToSatoshi(bad), { code: 'PAYMENT_ERR_AMOUNT' }, bad)
    }
    assert.throws(() => pkoinToSatoshi(null as unknown as string), { code: 'PAYMENT_ERR_AMOUNT' })
  })

  it('names what it refused in the message', () => {
    assert.throws(() => pkoinToSatoshi(0.30000000000000004, 'the value of output 0'), { message: 'the value of output 0 is not a whole number of satoshi (more than 8 decimals): "0.30000000000000004"' })
  })
})

describe('satoshi as decimal strings (the WebSocket\'s amounts)', () => {
  it('reads digits only, up to the safe integer limit', () => {
    assert.equal(satoshiFromString('150000000'), 150_000_000)
    assert.equal(satoshiFromString('0'), 0)
    assert.equal(satoshiFromString(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER)
    for (const bad of ['1.5', '-1', '01', '1e3', '', ' 1', '9007199254740992']) {
      assert.throws(() => satoshiFromString(bad), { code: 'PAYMENT_ERR_AMOUNT' }, bad)
    }
  })
})

describe('satoshi back to PKOIN', () => {
  it('writes decimal text without trailing zeros', () => {
    assert.equal(formatPkoin(150_000_000), '1.5')
    assert.equal(formatPkoin(1), '0.00000001')
    assert.equal(formatPkoin(0), '0')
    assert.equal(formatPkoin(2_100_000_000_000_000), '21000000')
    assert.equal(formatPkoin(4_987_554_322), '49.87554322')
    for (const bad of [1.5, -1, Number.MAX_SAFE_INTEGER + 1]) assert.throws(() => formatPkoin(bad), { code: 'PAYMENT_ERR_AMOUNT' })
  })

  it('gives the host a PKOIN number that reads back to the same satoshi', () => {
    for (const satoshi of [1, 12_345_678, 30_000_000, 115_000_000, 4_849_900_000, 2_100_000_000_000_000, 3_355_443_199_999_999]) {
      assert.equal(pkoinToSatoshi(satoshiToPkoinNumber(satoshi)), satoshi)
    }
    assert.throws(() => satoshiToPkoinNumber(MAX_FLOAT_PKOIN * 1e8), { code: 'PAYMENT_ERR_AMOUNT' })
  })

  it('tells satoshi amounts from other values', () => {
    assert.equal(isSatoshi(0), true)
    assert.equal(isSatoshi(Number.MAX_SAFE_INTEGER), true)
    for (const bad of [-1, 0.5, Number.MAX_SAFE_INTEGER + 1, '1', 1n, null]) assert.equal(isSatoshi(bad), false)
  })
})
