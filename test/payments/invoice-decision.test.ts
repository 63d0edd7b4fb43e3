import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decideInvoice, eventsBetween, standingChanged, type InvoiceStanding, type InvoiceTerms, type PaymentFacts } from '../../src/payments/invoice-decision.js'

const EXPIRES = 10_000
const TERMS: InvoiceTerms = { state: 'pending', amountSat: 1000, confirmationsRequired: 3, expiresAtMs: EXPIRES, settlingTxid: null }
const payment = (txid: string, facts: Partial<PaymentFacts> = {}): PaymentFacts => ({ txid, receivedSat: 1000, state: 'in_block', confirmations: 1, firstSeenAtMs: 5000, ...facts })
const standing = (facts: Partial<InvoiceStanding> = {}): InvoiceStanding => ({ state: 'pending', settlingTxid: null, confirmations: 0, underpaidSat: 0, overpaidSat: 0, paidLateSat: 0, ...facts })

describe('where an invoice stands', () => {
  it('is pending with no payment before expiry, expired from expiry on', () => {
    assert.equal(decideInvoice(TERMS, [], EXPIRES - 1).state, 'pending')
    assert.equal(decideInvoice(TERMS, [], EXPIRES).state, 'expired')
  })

  it('is seen in a block short of the confirmations, confirmed with them', () => {
    assert.deepEqual(decideInvoice(TERMS, [payment('a', { confirmations: 2 })], 6000), standing({ state: 'seen', settlingTxid: 'a', confirmations: 2 }))
    assert.deepEqual(decideInvoice(TERMS, [payment('a', { confirmations: 3 })], 6000), standing({ state: 'confirmed', settlingTxid: 'a', confirmations: 3 }))
  })

  it('stays pending while its payment in full waits in the mempool, even past expiry', () => {
    assert.deepEqual(decideInvoice(TERMS, [payment('a', { state: 'mempool', confirmations: 0 })], EXPIRES + 60_000), standing())
  })

  it('is seen, and then confirmed, after its expiry when the payment was first seen before it', () => {
    assert.equal(decideInvoice(TERMS, [payment('a', { confirmations: 1 })], EXPIRES + 1).state, 'seen')
    assert.equal(decideInvoice({ ...TERMS, state: 'seen', settlingTxid: 'a' }, [payment('a', { confirmations: 3 })], EXPIRES + 1).state, 'confirmed')
  })

  it('goes back to pending when a re-org puts the payment back in the mempool, or to expired once it is gone past expiry', () => {
    const seen = { ...TERMS, state: 'seen' as const, settlingTxid: 'a' }
    assert.equal(decideInvoice(seen, [payment('a', { state: 'mempool', confirmations: 0 })], 6000).state, 'pending')
    assert.equal(decideInvoice(seen, [payment('a', { state: 'dropped', confirmations: 0 })], 6000).state, 'pending')
    assert.equal(decideInvoice(seen, [payment('a', { state: 'dropped', confirmations: 0 })], EXPIRES).state, 'expired')
  })

  it('stays confirmed whatever comes after, its settling payment kept', () => {
    const confirmed = { ...TERMS, state: 'confirmed' as const, settlingTxid: 'a' }
    const after = decideInvoice(confirmed, [payment('a', { state: 'dropped', confirmations: 0 }), payment('b', { confirmations: 9 })], EXPIRES * 2)
    assert.deepEqual([after.state, after.settlingTxid], ['confirmed', 'a'])
  })

  it('flags a short payment on time as underpaid, summing them, and never settles with it', () => {
    const after = decideInvoice(TERMS, [payment('a', { receivedSat: 400 }), payment('b', { receivedSat: 500, confirmations: 9 })], 6000)
    assert.deepEqual(after, standing({ underpaidSat: 900 }))
  })

  it('settles with an overpayment and flags the excess; a second payment in full is all excess', () => {
    assert.deepEqual(decideInvoice(TERMS, [payment('a', { receivedSat: 1500 })], 6000), standing({ state: 'seen', settlingTxid: 'a', confirmations: 1, overpaidSat: 500 }))
    const twice = decideInvoice(TERMS, [payment('a', { confirmations: 1 }), payment('b', { confirmations: 2, firstSeenAtMs: 5500 })], 6000)
    assert.deepEqual([twice.settlingTxid, twice.overpaidSat], ['b', 1000])
  })

  it('flags a payment first seen at or after expiry as paid late, and does not settle with it', () => {
    const late = decideInvoice(TERMS, [payment('a', { firstSeenAtMs: EXPIRES, confirmations: 5 })], EXPIRES + 1)
    assert.deepEqual(late, standing({ state: 'expired', paidLateSat: 1000 }))
  })

  it('picks the settling payment in a block before one in the mempool, then the deepest, then the first seen', () => {
    const pick = (payments: PaymentFacts[]): string | null => decideInvoice(TERMS, payments, 6000).settlingTxid
    assert.equal(pick([payment('m', { state: 'mempool', confirmations: 0, firstSeenAtMs: 1 }), payment('b')]), 'b')
    assert.equal(pick([payment('a', { confirmations: 1 }), payment('b', { confirmations: 2 })]), 'b')
    assert.equal(pick([payment('b', { firstSeenAtMs: 2 }), payment('a', { firstSeenAtMs: 3 })]), 'b')
    assert.equal(pick([payment('b'), payment('a')]), 'a')
  })

  it('ignores dropped payments in every amount', () => {
    assert.deepEqual(decideInvoice(TERMS, [payment('a', { state: 'dropped', receivedSat: 10 }), payment('b', { state: 'dropped', firstSeenAtMs: EXPIRES })], 6000), standing())
  })
})

describe('the events of a change', () => {
  it('names the new state first, then each amount that grew', () => {
    assert.deepEqual(eventsBetween(standing(), standing({ state: 'seen', overpaidSat: 5 })), ['seen', 'overpaid'])
    assert.deepEqual(eventsBetween(standing(), standing({ underpaidSat: 1, paidLateSat: 1 })), ['underpaid', 'paidLate'])
    assert.deepEqual(eventsBetween(standing({ state: 'seen', confirmations: 1 }), standing({ state: 'seen', confirmations: 2 })), [])
    assert.deepEqual(eventsBetween(standing({ underpaidSat: 5 }), standing({ underpaidSat: 2 })), [])
  })

  it('tells a change of any stored field from none', () => {
    assert.equal(standingChanged(standing(), standing()), false)
    for (const change of [{ state: 'seen' }, { settlingTxid: 'a' }, { confirmations: 1 }, { underpaidSat: 1 }, { overpaidSat: 1 }, { paidLateSat: 1 }] as Array<Partial<InvoiceStanding>>) {
      assert.equal(standingChanged(standing(), standing(change)), true, JSON.stringify(change))
    }
  })
})
