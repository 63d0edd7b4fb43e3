/**
 * What a payout must be before anything is signed (src/payouts/payout-rules.ts): each rule
 * refuses with its stable code, and the limits counted under the locks (the day, a refund's room).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PayoutError, type PayoutErrorCode } from '../../src/payouts/payout-errors.js'
import { admit, checkAddress, checkAllowed, checkAmount, checkIdempotencyKey, checkMemo, type PayoutLimits } from '../../src/payouts/payout-rules.js'
import type { PayoutTerms } from '../../src/payouts/payout-store.js'

const MAIN = 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX'
const limits: PayoutLimits = { network: 'main', dustSat: 546, maxSat: 1_000_000, dailyMaxSat: 2_000_000, allowlist: new Set() }
const refusedWith = (code: PayoutErrorCode) => (err: unknown) => err instanceof PayoutError && err.code === code

describe('payout rules', () => {
  it('takes an address of the network only', () => {
    assert.equal(checkAddress(MAIN, limits), MAIN)
    assert.throws(() => checkAddress('micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4', limits), refusedWith('PAYOUT_ERR_ADDRESS'), 'a regtest address on mainnet')
    assert.throws(() => checkAddress(`${MAIN.slice(0, -1)}Y`, limits), refusedWith('PAYOUT_ERR_ADDRESS'), 'a bad checksum')
    assert.throws(() => checkAddress(42, limits), refusedWith('PAYOUT_ERR_ADDRESS'))
  })

  it('takes whole satoshi from the dust limit to PAYOUT_MAX_SAT', () => {
    assert.equal(checkAmount(546, limits), 546)
    assert.equal(checkAmount(1_000_000, limits), 1_000_000)
    for (const bad of [545, 0, -1, 1.5, '1000', Number.MAX_SAFE_INTEGER + 2]) assert.throws(() => checkAmount(bad, limits), refusedWith('PAYOUT_ERR_AMOUNT'), String(bad))
    assert.throws(() => checkAmount(1_000_001, limits), refusedWith('PAYOUT_ERR_OVER_LIMIT'))
    assert.equal(checkAmount(5_000_000_000, { ...limits, maxSat: 0 }), 5_000_000_000, '0: no limit')
  })

  it('takes a memo of 1 to 80 bytes of UTF-8 without control characters', () => {
    assert.equal(checkMemo(undefined), undefined)
    assert.equal(checkMemo('кофе'.repeat(10)), 'кофе'.repeat(10), '80 bytes in 40 characters')
    assert.throws(() => checkMemo('кофе'.repeat(10) + 'x'), refusedWith('PAYOUT_ERR_MEMO'), '81 bytes')
    for (const bad of ['', 'a\nb', 'tab\there', 7]) assert.throws(() => checkMemo(bad), refusedWith('PAYOUT_ERR_MEMO'), JSON.stringify(bad))
  })

  it('takes an idempotency key of 1 to 128 plain characters', () => {
    assert.equal(checkIdempotencyKey('prize:2026-11-29.alice_1'), 'prize:2026-11-29.alice_1')
    for (const bad of ['', 'x'.repeat(129), 'with space', 'slash/no', undefined]) assert.throws(() => checkIdempotencyKey(bad), refusedWith('PAYOUT_ERR_IDEMPOTENCY_KEY'), String(bad))
  })

  it('keeps payouts to the allowlist when there is one', () => {
    checkAllowed(MAIN, limits)
    checkAllowed(MAIN, { ...limits, allowlist: new Set([MAIN]) })
    assert.throws(() => checkAllowed(MAIN, { ...limits, allowlist: new Set(['PQ8AiCHJaTZAThr2TnpkQYDyVd1Hidq4PM']) }), refusedWith('PAYOUT_ERR_NOT_ALLOWED'))
  })

  it('counts the day, and a refund\'s room: the rest by default, never more than what is left', () => {
    const payout: PayoutTerms = { kind: 'payout', to: MAIN, amountSat: 500_000, requestedBy: 'app' }
    assert.equal(admit(payout, 1_500_000, undefined, limits).amountSat, 500_000)
    assert.throws(() => admit(payout, 1_500_001, undefined, limits), refusedWith('PAYOUT_ERR_DAILY_LIMIT'))
    assert.equal(admit(payout, 10_000_000, undefined, { ...limits, dailyMaxSat: 0 }).amountSat, 500_000, '0: no limit')
    const refund: PayoutTerms = { kind: 'refund', invoiceId: 'inv-1', to: MAIN, amountSat: 0, requestedBy: 'admin' }
    assert.equal(admit(refund, 0, { paidSat: 150_000, refundedSat: 100_000, refunds: 1 }, limits).amountSat, 50_000, 'the rest')
    assert.equal(admit({ ...refund, amountSat: 20_000 }, 0, { paidSat: 150_000, refundedSat: 100_000, refunds: 1 }, limits).amountSat, 20_000)
    assert.throws(() => admit({ ...refund, amountSat: 60_000 }, 0, { paidSat: 150_000, refundedSat: 100_000, refunds: 1 }, limits), refusedWith('REFUND_ERR_TOO_MUCH'))
    assert.throws(() => admit(refund, 0, { paidSat: 150_000, refundedSat: 150_000, refunds: 2 }, limits), refusedWith('REFUND_ERR_ALREADY_REFUNDED'))
    assert.throws(() => admit(refund, 0, { paidSat: 0, refundedSat: 0, refunds: 0 }, limits), refusedWith('REFUND_ERR_NOT_CONFIRMED'))
    assert.throws(() => admit(refund, 0, { paidSat: 150_000, refundedSat: 149_600, refunds: 1 }, limits), refusedWith('PAYOUT_ERR_AMOUNT'), 'a rest below dust')
  })
})
