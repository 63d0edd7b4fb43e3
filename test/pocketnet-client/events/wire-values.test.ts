import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backoffDelayMs } from '../../../packages/pocketnet-client/backoff.js'
import { readNodeMessage } from '../../../packages/pocketnet-client/events/node-messages.js'
import { blockHash, satoshi, wholeNumber } from '../../../packages/pocketnet-client/events/wire-values.js'

const HASH = 'ab'.repeat(32)

describe('the node\'s numbers, read exactly', () => {
  it('reads whole numbers from JSON numbers and decimal strings, up to the safe integer limit', () => {
    assert.equal(wholeNumber(0), 0)
    assert.equal(wholeNumber('150000000'), 150_000_000)
    assert.equal(wholeNumber(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER)
    for (const bad of ['9007199254740993', '12.5', '1e3', ' 7', '07', '-1', '', 12.5, -1, Number.MAX_SAFE_INTEGER + 1, NaN, null, true, [1]]) {
      assert.equal(wholeNumber(bad), undefined, JSON.stringify(bad))
    }
  })

  it('turns amounts into integer satoshi and refuses anything else with EVENTS_ERR_BAD_MESSAGE', () => {
    assert.equal(satoshi('250000000', 'an amount'), 250_000_000)
    assert.equal(satoshi(70, 'an amount'), 70)
    assert.throws(() => satoshi('2.5', 'a payment'), { code: 'EVENTS_ERR_BAD_MESSAGE', message: 'a payment is not a whole number of satoshi: "2.5"' })
    assert.throws(() => satoshi(0.1, 'a payment'), { code: 'EVENTS_ERR_BAD_MESSAGE' })
  })

  it('takes 64-hex block hashes, lowercased', () => {
    assert.equal(blockHash(HASH.toUpperCase()), HASH)
    assert.equal(blockHash('ab'), undefined)
    assert.equal(blockHash(7), undefined)
  })
})

describe('the node\'s WebSocket frames', () => {
  it('reads the keep-alive answer, registration replies and new blocks', () => {
    assert.deepEqual(readNodeMessage('1'), { kind: 'pong' })
    assert.deepEqual(readNodeMessage('{"result":"Registered"}'), { kind: 'registered' })
    assert.deepEqual(readNodeMessage('{"result":"error","error":"JSON value is not a string as expected"}'), { kind: 'refused', result: 'error', error: 'JSON value is not a string as expected' })
    assert.deepEqual(readNodeMessage(JSON.stringify({ addr: 'P', msg: 'new block', blockhash: HASH, time: '1700000000', height: 3_000_000, shares: 0 })), {
      kind: 'new-block', block: { height: 3_000_000, blockHash: HASH, time: 1_700_000_000 },
    })
    assert.deepEqual(readNodeMessage(JSON.stringify({ addr: 'P', msg: 'transaction', txid: 'x', amount: '5' })), { kind: 'other' })
  })

  it('refuses frames that are not the node\'s, and new blocks without their fields', () => {
    for (const frame of ['nope', '[1]', JSON.stringify({ msg: 'new block', blockhash: HASH, time: '1', height: '1.5' }), JSON.stringify({ msg: 'new block', blockhash: 'x', time: '1', height: 1 })]) {
      assert.throws(() => readNodeMessage(frame), { code: 'EVENTS_ERR_BAD_MESSAGE' }, frame)
    }
  })
})

describe('the reconnection backoff', () => {
  it('doubles from the minimum to the maximum, half of it fixed and half random', () => {
    const options = { minMs: 1000, maxMs: 8000 }
    assert.deepEqual([1, 2, 3, 4, 5].map(failures => backoffDelayMs(failures, { ...options, random: () => 0 })), [500, 1000, 2000, 4000, 4000])
    assert.equal(backoffDelayMs(3, { ...options, random: () => 0.999999 }), 4000)
    assert.equal(backoffDelayMs(1000, { ...options, random: () => 0.5 }), 6000)
  })
})
