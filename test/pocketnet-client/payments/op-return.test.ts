import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_MEMO_BYTES, memoByteLength, memoOfScript, memoScriptHex, readOpReturnPushes } from '../../../packages/pocketnet-client/payments/op-return.js'

const hexOf = (text: string): string => Buffer.from(text, 'utf8').toString('hex')

describe('OP_RETURN memos', () => {
  it('reads a short memo (one direct push), as the node shows it', () => {
    assert.equal(memoOfScript('6a0e696e765f64656d6f5f6578616374'), 'inv_demo_exact')
  })

  it('reads an 80-byte memo pushed with OP_PUSHDATA1, and UTF-8 beyond ASCII', () => {
    const memo = `inv_long_memo_${'x'.repeat(66)}`
    assert.equal(memoByteLength(memo), MAX_MEMO_BYTES)
    assert.equal(memoOfScript(`6a4c50${hexOf(memo)}`), memo)
    assert.equal(memoOfScript('6a0fd181d187d191d1825f343220e29895'), 'счёт_42 ☕')
  })

  it('reads OP_PUSHDATA2 and OP_PUSHDATA4 pushes too', () => {
    assert.deepEqual(readOpReturnPushes(`6a4d0300${hexOf('abc')}`)?.map(push => Buffer.from(push).toString()), ['abc'])
    assert.deepEqual(readOpReturnPushes(`6a4e03000000${hexOf('abc')}`)?.map(push => Buffer.from(push).toString()), ['abc'])
  })

  it('gives no memo for several pushes, an empty push, bad UTF-8, or no OP_RETURN', () => {
    // A Pocketnet social transaction: the type, then the payload's hash.
    const social = `6a05${hexOf('share')}20${'ab'.repeat(32)}`
    assert.equal(readOpReturnPushes(social)?.length, 2)
    assert.equal(memoOfScript(social), undefined)
    assert.equal(memoOfScript('6a00'), undefined)
    assert.equal(memoOfScript('6a'), undefined)
    assert.equal(memoOfScript('6a02c328'), undefined)
    assert.equal(memoOfScript('76a914b3a9dbb433dbb00f2d73dbe79c4375402bfa60fe88ac'), undefined)
  })

  it('refuses truncated pushes, opcodes that push no data, and text that is not hex', () => {
    for (const script of ['6a05616263', '6a4c', '6a4c05616263', '6a4d03', '6a4e0300', '6a51', '6a0', 'zz', '6a0e696e765f64656d6f5f657861637']) {
      assert.equal(readOpReturnPushes(script), undefined, script)
    }
  })

  it('writes the script the host writes, and reads it back', () => {
    assert.equal(memoScriptHex('inv_demo_exact'), '6a0e696e765f64656d6f5f6578616374')
    const long = 'м'.repeat(40)
    assert.equal(memoScriptHex(long).slice(0, 6), '6a4c50')
    assert.equal(memoOfScript(memoScriptHex(long)), long)
    assert.throws(() => memoScriptHex('x'.repeat(81)), { code: 'PAYMENT_ERR_EXPECTATION' })
    assert.throws(() => memoScriptHex(''), { code: 'PAYMENT_ERR_EXPECTATION' })
  })
})
